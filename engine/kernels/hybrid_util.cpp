#include "engine/kernels/hybrid_util.h"

#include <cmath>

#include "engine/kernels/quant_util.h"

namespace gruwb {

void quantize_row(const float* x, int32_t n, bool asymmetric, QuantizedRow* row) {
  int8_t* q = row->values;
  row->scale = 1.f;
  row->zero_point = 0;
  if (n <= 0) return;
  float lo = x[0], hi = x[0];
  for (int32_t i = 1; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  if (!asymmetric) {
    const float range = std::fabs(lo) > std::fabs(hi) ? std::fabs(lo) : std::fabs(hi);
    if (range == 0.f) {
      for (int32_t i = 0; i < n; ++i) q[i] = 0;
      return;
    }
    row->scale = range / 127.f;
    const float inverse = 127.f / range;
    for (int32_t i = 0; i < n; ++i) {
      const int32_t v = round_saturated(x[i] * inverse);
      q[i] = static_cast<int8_t>(v > 127 ? 127 : v < -127 ? -127 : v);
    }
    return;
  }
  // The range always holds 0, so that 0 is exactly representable; the zero
  // point comes from whichever end gives the smaller rounding error, in double
  // as TFLite computes it.
  const double rmin = lo < 0.f ? lo : 0.0, rmax = hi > 0.f ? hi : 0.0;
  if (rmin == rmax) {
    for (int32_t i = 0; i < n; ++i) q[i] = 0;
    return;
  }
  const double step = (rmax - rmin) / 255.0;
  const double from_min = -128.0 - rmin / step, from_max = 127.0 - rmax / step;
  const double zero_point =
      128.0 + std::fabs(rmin / step) < 127.0 + std::fabs(rmax / step) ? from_min : from_max;
  row->zero_point = zero_point <= -128.0  ? -128
                    : zero_point >= 127.0 ? 127
                                          : static_cast<int32_t>(std::round(zero_point));
  row->scale = static_cast<float>(step);
  const float inverse = 1.f / row->scale;
  const float offset = static_cast<float>(row->zero_point);
  for (int32_t i = 0; i < n; ++i) {
    const int32_t v = round_saturated(offset + x[i] * inverse);
    q[i] = static_cast<int8_t>(v > 127 ? 127 : v < -128 ? -128 : v);
  }
}

int32_t dot_int8(const int8_t* a, const int8_t* b, int32_t n) {
  int32_t sum = 0;
  for (int32_t i = 0; i < n; ++i) sum += static_cast<int32_t>(a[i]) * static_cast<int32_t>(b[i]);
  return sum;
}

int32_t sum_int8(const int8_t* a, int32_t n) {
  int32_t sum = 0;
  for (int32_t i = 0; i < n; ++i) sum += a[i];
  return sum;
}

void hybrid_matvec_accumulate(const int8_t* w, int32_t rows, int32_t cols, const float* scales,
                              bool per_row, const QuantizedRow& x, float* out) {
  const int8_t* row = w;
  for (int32_t r = 0; r < rows; ++r, row += cols) {
    int32_t dot = dot_int8(row, x.values, cols);
    // (q - zp) . w = q . w - zp * sum(w): TFLite's row sums.
    if (x.zero_point != 0) dot -= x.zero_point * sum_int8(row, cols);
    // One float product of the two scales, then one multiply: TFLite's order.
    const float scale = x.scale * scales[per_row ? r : 0];
    out[r] += static_cast<float>(dot) * scale;
  }
}

}  // namespace gruwb
