#include "engine/tools/initializers.h"

#include <algorithm>
#include <cmath>

namespace gruwb::tools {

double Rng::uniform() {
  const uint64_t high = next_u32() >> 5;  // 27 bits
  const uint64_t low = next_u32() >> 6;   // 26 bits
  return static_cast<double>((high << 26) | low) * (1.0 / 9007199254740992.0);
}

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u1 = uniform();
  while (u1 <= 0.0) u1 = uniform();  // log(0) is -inf
  const double u2 = uniform();
  const double radius = std::sqrt(-2.0 * std::log(u1));
  const double angle = 6.283185307179586 * u2;
  spare_ = radius * std::sin(angle);
  has_spare_ = true;
  return radius * std::cos(angle);
}

std::vector<float> uniform(Rng& rng, int n, float limit) {
  std::vector<float> values(static_cast<size_t>(std::max(n, 0)));
  for (float& v : values) v = static_cast<float>(rng.uniform(-limit, limit));
  return values;
}

std::vector<float> glorot_uniform(Rng& rng, int fan_out, int fan_in) {
  const double limit = std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return uniform(rng, fan_out * fan_in, static_cast<float>(limit));
}

namespace {

// Orthonormalises the columns of the row-major [rows, cols] matrix `a`
// (rows >= cols) in place. Two Gram-Schmidt passes per column keep the
// result orthonormal to double rounding even for ill-conditioned draws.
void orthonormalize_columns(std::vector<double>& a, int rows, int cols) {
  auto at = [&](int r, int c) -> double& { return a[static_cast<size_t>(r) * cols + c]; };
  for (int j = 0; j < cols; ++j) {
    for (int pass = 0; pass < 2; ++pass) {
      for (int i = 0; i < j; ++i) {
        double dot = 0;
        for (int r = 0; r < rows; ++r) dot += at(r, i) * at(r, j);
        for (int r = 0; r < rows; ++r) at(r, j) -= dot * at(r, i);
      }
    }
    double norm = 0;
    for (int r = 0; r < rows; ++r) norm += at(r, j) * at(r, j);
    norm = std::sqrt(norm);
    for (int r = 0; r < rows; ++r) at(r, j) /= norm;
  }
}

}  // namespace

std::vector<float> orthogonal(Rng& rng, int fan_out, int fan_in) {
  const int rows = std::max(fan_out, fan_in);
  const int cols = std::min(fan_out, fan_in);
  std::vector<double> q(static_cast<size_t>(rows) * cols);
  for (double& v : q) v = rng.normal();
  orthonormalize_columns(q, rows, cols);
  std::vector<float> out(q.size());
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const float v = static_cast<float>(q[static_cast<size_t>(r) * cols + c]);
      // Q is [max, min]; our layout is [fan_out, fan_in].
      if (fan_out >= fan_in) {
        out[static_cast<size_t>(r) * cols + c] = v;
      } else {
        out[static_cast<size_t>(c) * rows + r] = v;
      }
    }
  }
  return out;
}

}  // namespace gruwb::tools
