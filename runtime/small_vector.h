// A fixed-capacity vector for the few dims a call has: planning a call allocates nothing, which
// keeps the fixed cost per call near a memcpy's (bench: fixed_cost, a 64-byte tensor).
#pragma once

#include <array>
#include <cassert>
#include <cstddef>
#include <initializer_list>

namespace spacedepth::detail {

template <typename T, size_t N>
class SmallVector {
public:
    SmallVector() = default;
    SmallVector(std::initializer_list<T> items) {
        for (const T &t : items) push_back(t);
    }
    SmallVector(size_t count, const T &value) {
        for (size_t i = 0; i < count; i++) push_back(value);
    }
    void push_back(const T &t) {
        assert(size_ < N);
        items_[size_++] = t;
    }
    void insert_front(const T &t) {
        assert(size_ < N);
        for (size_t i = size_; i > 0; i--) items_[i] = items_[i - 1];
        items_[0] = t;
        size_++;
    }
    void pop_back() { size_--; }
    void clear() { size_ = 0; }
    void erase(T *first, T *last) {  // [first, last) must be a suffix, as after std::remove_if
        size_ -= static_cast<size_t>(last - first);
    }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    T &operator[](size_t i) { return items_[i]; }
    const T &operator[](size_t i) const { return items_[i]; }
    T &back() { return items_[size_ - 1]; }
    T *begin() { return items_.data(); }
    T *end() { return items_.data() + size_; }
    const T *begin() const { return items_.data(); }
    const T *end() const { return items_.data() + size_; }

private:
    std::array<T, N> items_{};
    size_t size_ = 0;
};

}  // namespace spacedepth::detail
