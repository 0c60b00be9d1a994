/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fifo.h: Fifo<T>, the queue every part of the PCIe host model uses (internal to the model).
 * A FIFO on a power-of-two ring that grows when full and reuses its slots: push_slot() hands
 * back a recycled element, with whatever capacity its vectors had, for the caller to reset, so
 * steady-state traffic allocates nothing. Header only.
 */
#ifndef NICSIM_FIFO_H
#define NICSIM_FIFO_H

#include <cstddef>
#include <utility>
#include <vector>

namespace nicsim::detail {

template <class T>
class Fifo {
public:
    bool empty() const { return n_ == 0; }
    size_t size() const { return n_; }
    T &front() { return buf_[head_]; }
    const T &front() const { return buf_[head_]; }
    T &back() { return buf_[(head_ + n_ - 1) & (buf_.size() - 1)]; }
    T &push_slot()
    {
        if (n_ == buf_.size())
            grow();
        T &s = buf_[(head_ + n_) & (buf_.size() - 1)];
        n_++;
        return s;
    }
    void pop()
    {
        head_ = (head_ + 1) & (buf_.size() - 1);
        n_--;
    }

private:
    void grow()
    {
        std::vector<T> nb(buf_.empty() ? 16 : buf_.size() * 2);
        for (size_t i = 0; i < buf_.size(); i++)
            nb[i] = std::move(buf_[(head_ + i) & (buf_.size() - 1)]);
        buf_.swap(nb);
        head_ = 0;
    }
    std::vector<T> buf_;
    size_t head_ = 0, n_ = 0;
};

} /* namespace nicsim::detail */

#endif /* NICSIM_FIFO_H */
