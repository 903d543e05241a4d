#include "tools/npy_io.h"

#include <xtensor/xnpy.hpp>

#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>

namespace npy {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLength = 6;

[[noreturn]] void fail(const std::string &path, const std::string &what) { throw Error(path + ": " + what); }

}  // namespace

std::vector<int64_t> strides(const Array &a) {
    std::vector<int64_t> s(a.shape.size(), 1);
    const size_t n = s.size();
    for (size_t i = 1; i < n; i++) {
        if (a.fortran_order) {
            s[i] = s[i - 1] * a.shape[i - 1];
        } else {
            s[n - 1 - i] = s[n - i] * a.shape[n - i];
        }
    }
    return s;
}

Array load(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        fail(path, std::string("cannot open for reading: ") + std::strerror(errno));
    }
    // Magic, version and header length are read here: xnpy's 1.0 reader sign-extends the length
    // bytes, which breaks headers of 128 bytes or more.
    char magic[kMagicLength + 2];
    if (!in.read(magic, sizeof(magic)) || std::memcmp(magic, kMagic, kMagicLength) != 0) {
        fail(path, "not a .npy file (bad magic string)");
    }
    const unsigned major = static_cast<unsigned char>(magic[kMagicLength]);
    uint32_t header_length = 0;
    unsigned char len[4] = {0, 0, 0, 0};
    if (major == 1) {
        if (!in.read(reinterpret_cast<char *>(len), 2)) fail(path, "truncated header");
        header_length = len[0] | (len[1] << 8);
    } else if (major == 2 || major == 3) {
        if (!in.read(reinterpret_cast<char *>(len), 4)) fail(path, "truncated header");
        header_length = len[0] | (len[1] << 8) | (len[2] << 16) | (uint32_t(len[3]) << 24);
    } else {
        fail(path, "unsupported .npy format version " + std::to_string(major));
    }
    if (header_length == 0 || header_length > (1u << 20)) {
        fail(path, "corrupt header length " + std::to_string(header_length));
    }
    std::string header(header_length, '\0');
    if (!in.read(header.data(), header_length)) {
        fail(path, "truncated header");
    }

    // The dtype first, by the library's dtype policy (spacedepth::dtype_from_typestr, which
    // Python applies too). xnpy's parser takes only [<>|][biufc]<size> and calls anything else a
    // corrupt header, so it reads the header with the dtype's carrier type in its place.
    std::smatch descr;
    if (!std::regex_search(header, descr, std::regex(R"('descr'\s*:\s*(\[|'([^']*)'))"))) {
        fail(path, "corrupt header: no 'descr' entry");
    }
    if (descr[1] == "[") {
        fail(path, "unsupported dtype: a structured (record) array; spacedepth moves numbers, bools and raw elements");
    }
    Array a;
    a.descr = descr[2].str();  // before the header changes under the match
    if (spacedepth::Status s = spacedepth::dtype_from_typestr(a.descr, &a.dtype); !s.ok()) {
        fail(path, s.message());
    }
    a.word_size = spacedepth::dtype_size(a.dtype);
    const std::string carrier = "|u" + std::to_string(a.word_size);
    header.replace(static_cast<size_t>(descr.position(2)), static_cast<size_t>(descr.length(2)), carrier);
    std::vector<std::size_t> shape;
    std::string parsed_descr;
    try {
        xt::detail::parse_header(header, parsed_descr, &a.fortran_order, shape);
    } catch (const std::exception &e) {
        fail(path, std::string("corrupt header: ") + e.what());
    }
    // Element count and payload size, overflow-checked against the file's real size.
    uint64_t count = 1;
    for (std::size_t d : shape) {
        if (d > INT64_MAX || __builtin_mul_overflow(count, static_cast<uint64_t>(d), &count)) {
            fail(path, "shape overflows 64-bit sizes");
        }
        a.shape.push_back(static_cast<int64_t>(d));
    }
    uint64_t bytes;
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(a.word_size), &bytes)) {
        fail(path, "shape overflows 64-bit sizes");
    }
    const std::streamoff data_start = in.tellg();
    in.seekg(0, std::ios::end);
    const uint64_t available = static_cast<uint64_t>(in.tellg() - data_start);
    if (available < bytes) {
        fail(path, "truncated: the shape needs " + std::to_string(bytes) + " data bytes, the file has " +
                       std::to_string(available));
    }
    in.seekg(data_start);
    a.data.resize(bytes);
    if (bytes && !in.read(reinterpret_cast<char *>(a.data.data()), static_cast<std::streamsize>(bytes))) {
        fail(path, "read error");
    }
    return a;
}

void save(const std::string &path, const Array &a) {
    std::string tmp = path + ".tmpXXXXXX";
    const int fd = mkstemp(tmp.data());
    if (fd < 0) {
        fail(path, std::string("cannot create output file: ") + std::strerror(errno));
    }
    const mode_t mask = umask(0);  // mkstemp creates 0600; give the file the usual mode
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    close(fd);
    bool ok;
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        std::vector<std::size_t> shape(a.shape.begin(), a.shape.end());
        xt::detail::write_header(out, a.descr, false, shape);
        out.write(reinterpret_cast<const char *>(a.data.data()), static_cast<std::streamsize>(a.data.size()));
        out.flush();
        ok = static_cast<bool>(out);
    }
    if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(tmp.c_str());
        fail(path, "cannot write output file: " + why);
    }
}

}  // namespace npy
