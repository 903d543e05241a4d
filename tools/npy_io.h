// .npy files for the CLI. The header dictionary is parsed and written by xtensor's xnpy (Debian's
// xtensor-dev); this file adds what the CLI needs around it: a byte-exact payload for any dtype
// (bfloat16 and qint8 included, which numpy lacks), size checks against the file, and an
// all-or-nothing write (a temporary file renamed into place).
#pragma once

#include <spacedepth/spacedepth.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace npy {

struct Array {
    std::string descr;  // numpy type string, e.g. "<f4", ">i2", "|V2" (byte order kept as in the file)
    spacedepth::DType dtype = spacedepth::DType::UInt8;  // the dtype that moves it (dtype_from_typestr)
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;   // the payload as stored: C order, or Fortran order (below)
    int word_size = 0;           // bytes per element
    bool fortran_order = false;  // data is column-major: the first dim is densest (save() writes C order)
};

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Throws npy::Error naming the file and the problem: missing, truncated, corrupt, a dtype the
// library's policy refuses (spacedepth::dtype_from_typestr: object, string, datetime; and
// structured arrays), or a size that does not match the shape. Fortran order and either byte
// order load as they are.
Array load(const std::string &path);

// The element strides of the array's shape in its storage order (C or Fortran).
std::vector<int64_t> strides(const Array &array);

// Writes to a temporary file next to path, then renames it over path. On any failure path is
// left as it was and npy::Error is thrown.
void save(const std::string &path, const Array &array);

}  // namespace npy
