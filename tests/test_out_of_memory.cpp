// Allocation failure is a status of its own (SD_ERROR_OUT_OF_MEMORY), through both APIs, with
// nothing written and nothing thrown. The only allocation a call makes is planning a fragmented
// view (a deep-side NCHW_VECT_C tensor in CRD order whose block does not line up with 4), so
// this binary replaces operator new with one that fails on request. Its own executable: the
// replacement must not meet a sanitizer's allocator or other tests.
#include "spacedepth/spacedepth.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <vector>

namespace {
thread_local bool fail_allocations = false;
}  // namespace

void *operator new(std::size_t size) {
    if (fail_allocations) throw std::bad_alloc();
    if (void *p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }

namespace {

struct FailAllocations {
    FailAllocations() { fail_allocations = true; }
    ~FailAllocations() { fail_allocations = false; }
};

// D2S, CRD, block 3: input (1, 36, 2, 2) NCHW_VECT_C, output (1, 4, 6, 6) NCHW: 36 fragments, so
// planning allocates. (With 1x1 pixels the groups' stride equals their lanes and the view folds
// into plain dims: nothing to allocate.)
struct FragmentedCall {
    std::vector<int8_t> in = std::vector<int8_t>(144, 7), out = std::vector<int8_t>(144, 0x5A);
    sd_tensor tin{}, tout{};
    sd_params params{SD_DEPTH_TO_SPACE, 3, 3, SD_ORDER_CRD, 1};
    FragmentedCall() {
        EXPECT_EQ(sd_tensor_init_dense(&tin, in.data(), SD_INT8, SD_LAYOUT_NCHW_VECT_C, 1, 36, 2, 2), SD_OK);
        EXPECT_EQ(sd_tensor_init_dense(&tout, out.data(), SD_INT8, SD_LAYOUT_NCHW, 1, 4, 6, 6), SD_OK);
    }
    bool untouched() const {
        for (int8_t b : out) {
            if (b != 0x5A) return false;
        }
        return true;
    }
};

TEST(OutOfMemory, CApiReturnsItsOwnStatus) {
    FragmentedCall c;
    sd_status s;
    {
        FailAllocations failing;
        s = sd_run(&c.params, &c.tin, &c.tout);
    }
    EXPECT_EQ(s, SD_ERROR_OUT_OF_MEMORY) << sd_last_error();
    EXPECT_STREQ(sd_status_name(s), "out of memory");
    EXPECT_STREQ(sd_last_error(), "out of memory");
    EXPECT_TRUE(c.untouched());
    // And with memory, the same call succeeds.
    EXPECT_EQ(sd_run(&c.params, &c.tin, &c.tout), SD_OK) << sd_last_error();
    EXPECT_FALSE(c.untouched());
}

TEST(OutOfMemory, CppApiReturnsItsOwnStatusAndDoesNotThrow) {
    FragmentedCall c;
    const spacedepth::Tensor in{c.tin.data,
                                spacedepth::DType::Int8,
                                spacedepth::Layout::NCHW_VECT_C,
                                {1, 36, 2, 2},
                                {c.tin.strides[0], c.tin.strides[1], c.tin.strides[2], c.tin.strides[3]}};
    const spacedepth::Tensor out{c.tout.data,
                                 spacedepth::DType::Int8,
                                 spacedepth::Layout::NCHW,
                                 {1, 4, 6, 6},
                                 {c.tout.strides[0], c.tout.strides[1], c.tout.strides[2], c.tout.strides[3]}};
    sd_status code = SD_OK;
    bool threw = false;
    {
        FailAllocations failing;
        try {
            // threads 0, not the C test's 1: another call, so not the plan the C test left in the
            // one-shot plan cache.
            code = spacedepth::depth_to_space(in, out, 3, spacedepth::Order::CRD, 0).code();
        } catch (...) {
            threw = true;
        }
    }
    EXPECT_FALSE(threw);
    EXPECT_EQ(code, SD_ERROR_OUT_OF_MEMORY);
    EXPECT_TRUE(c.untouched());
}

}  // namespace
