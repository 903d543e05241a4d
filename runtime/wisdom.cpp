// Wisdom (runtime/wisdom.h): measured choices per call shape, and their text file.
//
// The file is plain text, one call a line, as FFTW's wisdom is its own text: the runtime library
// links nothing but Halide's runtime (the wheel and the installed package need no JSON library),
// and every line is a fixed number of tokens, each read strictly (std::from_chars, the enums'
// name tables), so a hostile file gets one message naming its line and is never half imported.
#include "runtime/wisdom.h"

#include "runtime/isa.h"

#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace spacedepth::detail {

namespace {

constexpr const char *kMagic = "spacedepth-wisdom 1";
// Bounds on what an import reads: far above any real file (a line is under 200 bytes).
constexpr int64_t kMaxFileBytes = 16 << 20;
constexpr size_t kMaxEntries = 100000;
constexpr int kKeyTokens = 31;    // op order bd bh bw rank threads, then 12 per tensor
constexpr int kChoiceTokens = 5;  // a line of 0.8 (before streaming stores) has 4: plain stores
constexpr const char *kColumns =
    "# plan: op order bd bh bw rank threads, input: dtype layout dims(N C D H W) strides(N C D H W), "
    "output: the same, choice: family serial|parallel best|avx2 output|input (loop order) plain|stream "
    "(stores)";

struct Store {
    std::mutex mutex;
    std::map<std::string, PlanChoice> choices;  // by key_of()
    std::atomic<uint64_t> generation{0};
    std::atomic<size_t> size{0};  // lets lookups skip the key while the wisdom is empty
};

Store &store() {
    static Store s;
    return s;
}

void append_tensor(std::string *key, const sd_tensor &t) {
    *key += std::string(" ") + dtype_label(t.dtype) + " " + layout_label(t.layout);
    for (int64_t d : t.dims) *key += " " + std::to_string(d);
    for (int64_t s : t.strides) *key += " " + std::to_string(s);
}

// The call's shape as the file's first kKeyTokens tokens (Problem: 5-D tensors, 3-D block).
std::string key_of(const Problem &p) {
    std::string key = std::string(op_label(p.op)) + " " + order_label(p.order);
    for (int64_t b : p.block) key += " " + std::to_string(b);
    key += " " + std::to_string(p.spatial_rank) + " " + std::to_string(p.threads);
    append_tensor(&key, p.in);
    append_tensor(&key, p.out);
    return key;
}

std::string choice_text(const PlanChoice &c) {
    return std::string(kernel_family_name(c.family)) + (c.parallel ? " parallel" : " serial") +
           (c.avx2_path ? " avx2" : " best") + (c.input_loop_order ? " input" : " output") +
           (c.stream ? " stream" : " plain");
}

// The machine and library a file was measured on: its header lines after the magic.
std::vector<std::pair<std::string, std::string>> identity() {
    return {{"library", SPACEDEPTH_VERSION_STRING},
            {"cpu", cpu_model_name()},
            {"kernel-target", cpu_kernel_target()},
            {"cores", std::to_string(std::thread::hardware_concurrency())}};
}

bool int_token(const std::string &token, int64_t *value) {
    const char *end = token.data() + token.size();
    auto [ptr, ec] = std::from_chars(token.data(), end, *value);
    return ec == std::errc() && ptr == end;
}

int index_in(const char *const *names, int count, const std::string &token) {
    for (int i = 0; i < count; i++) {
        if (token == names[i]) return i;
    }
    return -1;
}

// Reads one plan line's tokens after "plan": the canonical key and the choice, or the rule broken.
std::string parse_plan_line(const std::vector<std::string> &t, std::string *key, PlanChoice *choice) {
    if (t.size() != static_cast<size_t>(kKeyTokens) + static_cast<size_t>(kChoiceTokens) &&
        t.size() != static_cast<size_t>(kKeyTokens) + static_cast<size_t>(kChoiceTokens) - 1) {
        return "a plan line has " + std::to_string(kKeyTokens + kChoiceTokens) + " fields after 'plan' (" +
               std::to_string(kKeyTokens + kChoiceTokens - 1) + " without the stores), this one " +
               std::to_string(t.size());
    }
    Problem p{};
    const int op = op_index(t[0]), order = order_index(t[1]);
    if (op < 0) return "unknown op '" + t[0] + "'";
    if (order < 0) return "unknown order '" + t[1] + "'";
    p.op = static_cast<sd_op>(op);
    p.order = static_cast<sd_order>(order);
    int64_t rank = 0, threads = 0;
    for (int i = 0; i < 3; i++) {
        if (!int_token(t[2 + i], &p.block[i]) || p.block[i] < 1) return "block size '" + t[2 + i] + "' is not >= 1";
    }
    if (!int_token(t[5], &rank) || rank < 1 || rank > kMaxSpatialRank) return "rank '" + t[5] + "' is not 1, 2 or 3";
    if (!int_token(t[6], &threads) || threads < 0 || threads > INT32_MAX) return "threads '" + t[6] + "' is not >= 0";
    p.spatial_rank = static_cast<int>(rank);
    p.threads = static_cast<int>(threads);
    size_t i = 7;
    for (sd_tensor *tensor : {&p.in, &p.out}) {
        const int dtype = dtype_index(t[i]), layout = layout_index(t[i + 1]);
        if (dtype < 0) return "unknown dtype '" + t[i] + "'";
        if (layout < 0 || layout_label(static_cast<sd_layout>(layout)) != t[i + 1]) {
            return "unknown layout '" + t[i + 1] + "'";
        }
        tensor->dtype = static_cast<sd_dtype>(dtype);
        tensor->layout = static_cast<sd_layout>(layout);
        i += 2;
        for (int64_t &d : tensor->dims) {
            if (!int_token(t[i], &d) || d < 0) return "dim '" + t[i] + "' is not an integer >= 0";
            i++;
        }
        for (int64_t &s : tensor->strides) {
            if (!int_token(t[i], &s)) return "stride '" + t[i] + "' is not a 64-bit integer";
            i++;
        }
    }
    const int family = index_in(kKernelFamilyNames, kKernelFamilyCount, t[i]);
    if (family < 0) {
        std::string names;
        for (const char *name : kKernelFamilyNames) names += (names.empty() ? "" : ", ") + std::string(name);
        return "unknown kernel family '" + t[i] + "' (one of " + names + ")";
    }
    static const char *const kParallel[] = {"serial", "parallel"}, *const kPath[] = {"best", "avx2"},
                             *const kLoopOrder[] = {"output", "input"}, *const kStores[] = {"plain", "stream"};
    const int parallel = index_in(kParallel, 2, t[i + 1]), path = index_in(kPath, 2, t[i + 2]),
              loop_order = index_in(kLoopOrder, 2, t[i + 3]),
              stores = i + 4 < t.size() ? index_in(kStores, 2, t[i + 4]) : 0;
    if (parallel < 0) return "'" + t[i + 1] + "' is not serial or parallel";
    if (path < 0) return "'" + t[i + 2] + "' is not best or avx2";
    if (loop_order < 0) return "'" + t[i + 3] + "' is not output or input";
    if (stores < 0) return "'" + t[i + 4] + "' is not plain or stream";
    *choice = PlanChoice{static_cast<KernelFamily>(family), parallel == 1, path == 1, loop_order == 1, stores == 1};
    *key = key_of(p);
    return "";
}

Status wisdom_error(const std::string &source, int line, const std::string &why) {
    return error(SD_ERROR_INVALID_ARGUMENT,
                 "wisdom " + source + " line " + std::to_string(line) + ": " + why + "; nothing imported");
}

}  // namespace

std::string cpu_model_name() {
    std::string name;
#if defined(__x86_64__) || defined(__i386__)
    // CPUID itself (the __cpuid macro): <cpuid.h>'s __get_cpuid helpers pass the unsigned
    // registers through int, which the asan preset's implicit-conversion checks report.
    unsigned regs[12] = {}, max_leaf = 0, b = 0, c = 0, d = 0;
    __cpuid(0x80000000u, max_leaf, b, c, d);
    if (max_leaf >= 0x80000004u) {
        for (unsigned leaf = 0; leaf < 3; leaf++) {
            __cpuid(0x80000002u + leaf, regs[4 * leaf], regs[4 * leaf + 1], regs[4 * leaf + 2], regs[4 * leaf + 3]);
        }
        char brand[49] = {};
        std::memcpy(brand, regs, 48);
        name = brand;
    }
#endif
    // One space between words: brand strings pad with runs of spaces.
    std::string words;
    std::istringstream in(name);
    for (std::string w; in >> w;) words += (words.empty() ? "" : " ") + w;
    return words.empty() ? "unknown" : words;
}

std::optional<PlanChoice> wisdom_choice(const Problem &problem) {
    Store &s = store();
    if (s.size.load(std::memory_order_relaxed) == 0) {
        return std::nullopt;
    }
    const std::string key = key_of(problem);
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.choices.find(key);
    return it == s.choices.end() ? std::nullopt : std::optional<PlanChoice>(it->second);
}

void remember_choice(const Problem &problem, const PlanChoice &choice) {
    Store &s = store();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.choices[key_of(problem)] = choice;
    s.size.store(s.choices.size(), std::memory_order_relaxed);
    s.generation.fetch_add(1, std::memory_order_relaxed);
}

uint64_t wisdom_generation() { return store().generation.load(std::memory_order_relaxed); }

void forget_wisdom() {
    Store &s = store();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.choices.clear();
    s.size.store(0, std::memory_order_relaxed);
    s.generation.fetch_add(1, std::memory_order_relaxed);
}

std::string wisdom_text() {
    std::string text = std::string(kMagic) + "\n";
    for (const auto &[name, value] : identity()) text += name + " " + value + "\n";
    text += std::string(kColumns) + "\n";
    Store &s = store();
    std::lock_guard<std::mutex> lock(s.mutex);
    for (const auto &[key, choice] : s.choices) text += "plan " + key + " " + choice_text(choice) + "\n";
    return text;
}

Status import_wisdom_text(const std::string &text, const std::string &source) {
    if (static_cast<int64_t>(text.size()) > kMaxFileBytes) {
        return error(SD_ERROR_INVALID_ARGUMENT,
                     "wisdom " + source + " is over " + std::to_string(kMaxFileBytes >> 20) + " MiB; nothing imported");
    }
    if (text.find('\0') != std::string::npos) {
        return error(SD_ERROR_INVALID_ARGUMENT, "wisdom " + source + " holds a NUL byte (not text); nothing imported");
    }
    std::istringstream lines(text);
    std::string line;
    int number = 0;
    const auto header = identity();
    std::map<std::string, PlanChoice> read;
    while (std::getline(lines, line)) {
        number++;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (number == 1) {
            if (line != kMagic)
                return wisdom_error(source, 1,
                                    "not a wisdom file (the first line is not '" + std::string(kMagic) + "')");
            continue;
        }
        if (number <= 1 + static_cast<int>(header.size())) {
            const auto &[name, ours] = header[number - 2];
            const size_t space = line.find(' ');
            if (line.substr(0, space) != name) return wisdom_error(source, number, "expected the '" + name + "' line");
            const std::string theirs = space == std::string::npos ? "" : line.substr(space + 1);
            if (theirs != ours) {
                return error(SD_ERROR_UNSUPPORTED, "wisdom " + source + " was measured with " + name + " '" + theirs +
                                                       "', this process has '" + ours +
                                                       "': its choices may not hold here; nothing imported");
            }
            continue;
        }
        std::istringstream in(line);
        std::vector<std::string> tokens;
        for (std::string token; in >> token;) tokens.push_back(token);
        if (tokens.empty() || tokens[0][0] == '#') continue;
        if (tokens[0] != "plan") return wisdom_error(source, number, "expected 'plan' or a '#' comment");
        tokens.erase(tokens.begin());
        std::string key;
        PlanChoice choice;
        if (std::string why = parse_plan_line(tokens, &key, &choice); !why.empty()) {
            return wisdom_error(source, number, why);
        }
        read[key] = choice;
        if (read.size() > kMaxEntries) {
            return wisdom_error(source, number, "more than " + std::to_string(kMaxEntries) + " plans");
        }
    }
    if (number <= static_cast<int>(header.size())) {
        return wisdom_error(source, number + 1, "the header ends early (magic, library, cpu, kernel-target, cores)");
    }
    Store &s = store();
    std::lock_guard<std::mutex> lock(s.mutex);
    // The cap is checked before anything merges: a refused import leaves the store as it was.
    size_t added = 0;
    for (const auto &entry : read) added += s.choices.count(entry.first) == 0;
    if (s.choices.size() + added > kMaxEntries) {
        return error(SD_ERROR_INVALID_ARGUMENT, "wisdom " + source + ": with it the wisdom would hold " +
                                                    std::to_string(s.choices.size() + added) + " plans, more than " +
                                                    std::to_string(kMaxEntries) + "; nothing imported");
    }
    for (auto &[key, choice] : read) s.choices[key] = choice;
    s.size.store(s.choices.size(), std::memory_order_relaxed);
    s.generation.fetch_add(1, std::memory_order_relaxed);
    return {};
}

Status export_wisdom_file(const std::string &path) {
    const std::string text = wisdom_text();
    std::string tmp = path + ".tmpXXXXXX";
    const int fd = mkstemp(tmp.data());
    if (fd < 0) {
        return error(SD_ERROR_INVALID_ARGUMENT, "cannot write wisdom to '" + path + "': " + std::strerror(errno));
    }
    close(fd);
    bool ok = false;
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << text;
        out.flush();
        ok = static_cast<bool>(out);
    }
    if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        std::remove(tmp.c_str());
        return error(SD_ERROR_INVALID_ARGUMENT, "cannot write wisdom to '" + path + "': " + std::strerror(err));
    }
    return {};
}

Status import_wisdom_file(const std::string &path) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) {
        return error(SD_ERROR_INVALID_ARGUMENT, "cannot read wisdom '" + path + "': " + std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
        return error(SD_ERROR_INVALID_ARGUMENT, "wisdom '" + path + "' is not a regular file");
    }
    if (st.st_size > kMaxFileBytes) {
        return error(SD_ERROR_INVALID_ARGUMENT,
                     "wisdom '" + path + "' is over " + std::to_string(kMaxFileBytes >> 20) + " MiB; nothing imported");
    }
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
        return error(SD_ERROR_INVALID_ARGUMENT, "cannot read wisdom '" + path + "'");
    }
    return import_wisdom_text(text.str(), "'" + path + "'");
}

}  // namespace spacedepth::detail
