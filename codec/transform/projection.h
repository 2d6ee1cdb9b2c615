// The transform codec's projections, one small matrix product per row: the encoder's
// y = (x - mu_r) W_r^T (stage 1 of transform_encode_stages.h) and the decoder's sums y W_r (stage 4 of
// transform_decode_stages.h). Every element is summed in the order of the inner index, from zero,
// multiply then add (no fused multiply-add): exactly transform_component's and transform_value's
// sums, so the CPU codec's values are the GPU kernels' bit for bit, on any CPU. One register-blocked
// loop built twice, for AVX2 and for the baseline ISA, chosen once at run time; it replaced Eigen's
// GEMM, which is built for the baseline (no AVX) and sums in its own order.
#pragma once
#include <cstdint>

namespace kvstream::codec {

// out[r][j] = sum over i < inner of a[r][i] * b[i][j], for r < rows and j < cols; a, b and out are
// row-major with rows lda, ldb and ldo floats apart.
void matrix_product(const float* a, int64_t rows, int inner, int64_t lda, const float* b, int cols, int64_t ldb,
                    float* out, int64_t ldo);

}  // namespace kvstream::codec
