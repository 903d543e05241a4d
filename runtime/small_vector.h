// A fixed-capacity vector for the few dims a call has: planning a call allocates nothing, which
// keeps the fixed cost per call near a memcpy's (bench: fixed_cost, a 64-byte tensor).
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <initializer_list>
#include <type_traits>

namespace spacedepth::detail {

template <typename T, size_t N>
class SmallVector {
public:
    SmallVector() {}
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
    T *begin() { return items_; }
    T *end() { return items_ + size_; }
    const T *begin() const { return items_; }
    const T *end() const { return items_ + size_; }

    // Copies move the used elements only; the rest of the storage is never initialised, so a
    // SmallVector costs nothing to create (a plan holds several of up to 16 dims).
    SmallVector(const SmallVector &other) : size_(other.size_) { std::copy(other.begin(), other.end(), items_); }
    SmallVector &operator=(const SmallVector &other) {
        size_ = other.size_;
        std::copy(other.begin(), other.end(), items_);
        return *this;
    }

private:
    static_assert(std::is_trivially_destructible_v<T>, "plain values only: elements are never destroyed");
    union {
        T items_[N];  // a union member: not constructed until written
    };
    size_t size_ = 0;
};

}  // namespace spacedepth::detail
