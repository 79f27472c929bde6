#pragma once
// TFLite's hybrid arithmetic (INT8 weights with scales, float activations),
// one copy for FULLY_CONNECTED and the recurrent kernels (LSTM, RNN, GRU):
// a float vector is quantized to int8 at run time, per batch row, with its
// own scale (symmetric, or asymmetric with a zero point when the op's
// asymmetric_quantize_inputs asks for it); int8 weight rows multiply it in
// int32, and the sum is scaled back to float with
// (row scale * weight scale) and added to the output. Doing exactly this, in
// this order, is what makes our outputs equal TFLite's rather than those of
// float maths on dequantized weights (which differ by up to ~1e-2).

#include <cstdint>

namespace gruwb {

// A float vector quantized at run time: x[i] ~= (values[i] - zero_point) * scale.
// `values` is kernel scratch planned at prepare.
struct QuantizedRow {
  int8_t* values = nullptr;
  float scale = 1.f;
  int32_t zero_point = 0;
};

// TFLite's SymmetricQuantizeFloats (asymmetric = false: scale max|x| / 127,
// values in [-127, 127], zero point 0) or AsymmetricQuantizeFloats (range
// [min(x,0), max(x,0)] over 255 steps, a zero point nudged into [-128, 127]).
// A row of zeros gets scale 1 and all-zero values. row->values holds n bytes.
void quantize_row(const float* x, int32_t n, bool asymmetric, QuantizedRow* row);

// sum over i < n of a[i] * b[i], in int32 (n * 127 * 128 fits for any n < 131,000).
int32_t dot_int8(const int8_t* a, const int8_t* b, int32_t n);
// sum over i < n of a[i].
int32_t sum_int8(const int8_t* a, int32_t n);

// out[r] += float(W[r, :] . (x.values - x.zero_point)) * (x.scale * scales[r or 0])
// for r < rows, W int8 [rows, cols] row-major with zero point 0 (TFLite's
// hybrid weights are symmetric); per_row: one scale per row, else scales[0].
void hybrid_matvec_accumulate(const int8_t* w, int32_t rows, int32_t cols, const float* scales,
                              bool per_row, const QuantizedRow& x, float* out);

}  // namespace gruwb
