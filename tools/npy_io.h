// .npy files for the CLI. The header dictionary is parsed and written by xtensor's xnpy (Debian's
// xtensor-dev); this file adds what the CLI needs around it: a byte-exact payload for any dtype
// (bfloat16 and qint8 included, which numpy lacks), size checks against the file, and an
// all-or-nothing write (a temporary file renamed into place).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace npy {

struct Array {
    std::string descr;  // numpy type string, e.g. "<f4", "|u1"
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;  // C order, little endian
    int word_size = 0;          // bytes per element
};

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Throws npy::Error naming the file and the problem: missing, truncated, corrupt, Fortran order,
// big endian, or a size that does not match the shape.
Array load(const std::string &path);

// Writes to a temporary file next to path, then renames it over path. On any failure path is
// left as it was and npy::Error is thrown.
void save(const std::string &path, const Array &array);

// The spacedepth dtype name for a numpy type string ("<f4" -> "float32"), or "" if none.
std::string dtype_name_for_descr(const std::string &descr);

}  // namespace npy
