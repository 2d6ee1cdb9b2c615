// KVSTREAM_HD marks per-thread code that runs both in CUDA kernels and in the sequential CPU
// launcher used by tests on machines without a GPU (DietGPU-style shared per-thread code).
//
// Per-thread code must give the same bits on both sides, so its float and double arithmetic goes through the
// helpers below: on the GPU they are the round-to-nearest intrinsics, which nvcc never fuses into a
// multiply-add; on the CPU plain IEEE operations (the build enables no FMA contraction: no -march).
// Bit casts are here too: nvcc compiles at C++17, which has no std::bit_cast.
#pragma once
#include <cstdint>
#if !defined(__CUDACC__)
#include <bit>
#else
#include <cstring>
#endif

#if defined(__CUDACC__)
#define KVSTREAM_HD __host__ __device__ __forceinline__
#else
#define KVSTREAM_HD inline
#endif

namespace kvstream::common {

KVSTREAM_HD uint32_t float_as_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#elif defined(__CUDACC__)
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#else
  return std::bit_cast<uint32_t>(f);
#endif
}

KVSTREAM_HD float bits_as_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#elif defined(__CUDACC__)
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#else
  return std::bit_cast<float>(u);
#endif
}

#if defined(__CUDA_ARCH__)
KVSTREAM_HD float add_rn(float a, float b) { return __fadd_rn(a, b); }
KVSTREAM_HD float sub_rn(float a, float b) { return __fsub_rn(a, b); }
KVSTREAM_HD float mul_rn(float a, float b) { return __fmul_rn(a, b); }
KVSTREAM_HD float div_rn(float a, float b) { return __fdiv_rn(a, b); }
KVSTREAM_HD double dadd_rn(double a, double b) { return __dadd_rn(a, b); }
KVSTREAM_HD double dsub_rn(double a, double b) { return __dsub_rn(a, b); }
KVSTREAM_HD double dmul_rn(double a, double b) { return __dmul_rn(a, b); }
KVSTREAM_HD double ddiv_rn(double a, double b) { return __ddiv_rn(a, b); }
#else
KVSTREAM_HD float add_rn(float a, float b) { return a + b; }
KVSTREAM_HD float sub_rn(float a, float b) { return a - b; }
KVSTREAM_HD float mul_rn(float a, float b) { return a * b; }
KVSTREAM_HD float div_rn(float a, float b) { return a / b; }
KVSTREAM_HD double dadd_rn(double a, double b) { return a + b; }
KVSTREAM_HD double dsub_rn(double a, double b) { return a - b; }
KVSTREAM_HD double dmul_rn(double a, double b) { return a * b; }
KVSTREAM_HD double ddiv_rn(double a, double b) { return a / b; }
#endif

}  // namespace kvstream::common
