// The fixed benchmark case matrix: both ops, DCR and CRD, NHWC / NCHW / NCHW_VECT_C and
// fused conversions, float32 and uint8 (plus one each of 2-, 8- and 16-byte elements), C in
// {1, 3, 16, 64}, blocks 2, 3, 4 and one rectangular.
#pragma once

#include "spacedepth/spacedepth.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace bench {

struct Case {
    std::string name;
    spacedepth::Op op;
    spacedepth::Order order;
    spacedepth::Layout layout, out_layout;
    spacedepth::DType dtype;
    int64_t small_channels;  // the space side's C
    int64_t bh, bw;
    int rank = 2;    // spatial rank: 1 (bh is 1), 2, or 3 (with bd)
    int64_t bd = 1;  // rank 3's block depth

    spacedepth::Block block() const;
    // The space-side and deep-side logical dims of a tensor of about `bytes`, and its exact size.
    void dims(int64_t bytes, spacedepth::Dims *space, spacedepth::Dims *deep, int64_t *exact_bytes) const;
};

std::vector<Case> all_cases();

// A case as JSON: name, op, order, layout, out_layout, dtype, channels, bh, bw, rank, bd (the
// benches' output and --cases_json, which bench/peers.py and results_table.py read).
nlohmann::json describe(const Case &c);

// Shapes from real models outside the matrix (its counts stay comparable run to run): channel
// counts that are not powers of two (3, 6, 12, 24, 27, 48), blocks 2-4 and two rectangular
// blocks, 1-, 2- and 4-byte elements. Named like the matrix's cases; `make bench` runs them as
// model/<implementation>/<case>/..., on one thread, with their own table in RESULTS.md.
std::vector<Case> model_cases();

// Beyond the peers: spatial rank 1 and 3 (1-D and volumetric shuffles) and the blocked channel
// layouts (NCHWc8, NCHWc16). No peer here offers them; `make bench` runs them as
// rank/spacedepth/<case>/... on 1 and 2 threads, with their own table in RESULTS.md.
std::vector<Case> rank_cases();

// Tensor sizes (bytes of one tensor): in L2 (128 KiB, and 512 KiB of a 1 MiB L2), in L3, and
// well beyond the caches. The smaller ones (256 B to 32 KiB) are the plan/ and oneshot/ rows.
constexpr int64_t kSizes[] = {128 << 10, 512 << 10, 2 << 20, 64 << 20};

}  // namespace bench
