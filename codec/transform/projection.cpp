#include "codec/transform/projection.h"

#include <algorithm>
#include <cstring>

namespace kvstream::codec {
namespace {

// Eight floats as one value; the compiler lowers the operations to what the target has (one AVX2
// register, or two SSE ones), lane by lane in IEEE arithmetic, so both versions give the same bits.
using Lanes = float __attribute__((vector_size(32)));
constexpr int kLanes = 8;
constexpr int kBlockRows = 6;              // rows of a (and out) per block
constexpr int kBlockCols = 2 * kLanes;     // columns of b (and out) per block: 6 x 16 sums in 12 AVX registers

// One block: out[r0 + k][j0 + j] for k < kRows and j < width (<= kBlockCols); columns past width
// sum zeros and are not stored.
template <int kRows>
[[gnu::always_inline]] inline void product_block(const float* a, int64_t r0, int inner, int64_t lda, const float* b,
                                                 int j0, int width, int64_t ldb, float* out, int64_t ldo) {
  Lanes sum[kRows][2] = {};
  for (int i = 0; i < inner; ++i) {
    const float* bi = b + int64_t(i) * ldb + j0;
    Lanes low, high;
    if (width == kBlockCols) {  // the common case: two plain loads
      std::memcpy(&low, bi, sizeof low);
      std::memcpy(&high, bi + kLanes, sizeof high);
    } else {
      float row[kBlockCols] = {};
      std::copy_n(bi, width, row);
      std::memcpy(&low, row, sizeof low);
      std::memcpy(&high, row + kLanes, sizeof high);
    }
#pragma GCC unroll 8
    for (int k = 0; k < kRows; ++k) {
      const float ak = a[(r0 + k) * lda + i];
      sum[k][0] += ak * low;
      sum[k][1] += ak * high;
    }
  }
#pragma GCC unroll 8
  for (int k = 0; k < kRows; ++k) {
    const Lanes low = sum[k][0], high = sum[k][1];
    float row[kBlockCols];
    std::memcpy(row, &low, sizeof low);
    std::memcpy(row + kLanes, &high, sizeof high);
    std::copy_n(row, width, out + (r0 + k) * ldo + j0);
  }
}

// Every block, inlined into each instruction-set version below.
[[gnu::always_inline]] inline void product(const float* a, int64_t rows, int inner, int64_t lda, const float* b,
                                           int cols, int64_t ldb, float* out, int64_t ldo) {
  for (int j0 = 0; j0 < cols; j0 += kBlockCols) {
    const int width = std::min(kBlockCols, cols - j0);
    int64_t r = 0;
    for (; r + kBlockRows <= rows; r += kBlockRows) product_block<kBlockRows>(a, r, inner, lda, b, j0, width, ldb, out, ldo);
    for (; r < rows; ++r) product_block<1>(a, r, inner, lda, b, j0, width, ldb, out, ldo);
  }
}

__attribute__((target("avx2"))) void product_avx2(const float* a, int64_t rows, int inner, int64_t lda, const float* b,
                                                  int cols, int64_t ldb, float* out, int64_t ldo) {
  product(a, rows, inner, lda, b, cols, ldb, out, ldo);
}

void product_baseline(const float* a, int64_t rows, int inner, int64_t lda, const float* b, int cols, int64_t ldb,
                      float* out, int64_t ldo) {
  product(a, rows, inner, lda, b, cols, ldb, out, ldo);
}

}  // namespace

void matrix_product(const float* a, int64_t rows, int inner, int64_t lda, const float* b, int cols, int64_t ldb,
                    float* out, int64_t ldo) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  (avx2 ? product_avx2 : product_baseline)(a, rows, inner, lda, b, cols, ldb, out, ldo);
}

}  // namespace kvstream::codec
