// The 3-D Laplace problem of scanlab-jacobi, and its CPU iteration (the reference of
// --validate and of the tests).
//
// The grid: N x N x N points (i, j, k) in 0 .. N-1, stored with i fastest
// (index i + N j + N^2 k), at coordinates (x, y, z) = (i, j, k) / (N - 1) in [0, 1]^3.
// Points with any index 0 or N-1 are the boundary: fixed values. Interior points start
// at 0 and are updated by Jacobi sweeps of the 7-point Laplacian,
//   u'(p) = (u(p-1) + u(p+1) + u(p-N) + u(p+N) + u(p-N^2) + u(p+N^2)) * (1/6),
// summed in exactly that order on the CPU and the GPU (so they agree to the bit).
//
// Boundary values (--boundary):
//   harmonic  u = x^2 - y^2 + z. Harmonic, and exactly so for the 7-point stencil (the
//             second differences of x^2 and y^2 are equal constants): the converged
//             discrete solution is x^2 - y^2 + z at every point. The default.
//   ones      u = 1: the solution is 1 everywhere.
//   face      u = 1 on the face z = 0, 0 on the other faces (no closed form).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace scanlab::jacobi {

enum class boundary { harmonic, ones, face };

constexpr std::string_view name(boundary b) {
  switch (b) {
    case boundary::harmonic: return "harmonic";
    case boundary::ones: return "ones";
    case boundary::face: return "face";
  }
  return "?";
}

inline std::optional<boundary> parse_boundary(std::string_view text) {
  if (text == "harmonic") return boundary::harmonic;
  if (text == "ones") return boundary::ones;
  if (text == "face") return boundary::face;
  return std::nullopt;
}

// The exact solution at a point, where the boundary condition has one (harmonic, ones).
inline std::optional<double> exact_value(boundary b, std::int64_t n, std::int64_t i, std::int64_t j, std::int64_t k) {
  const double h = n > 1 ? 1.0 / static_cast<double>(n - 1) : 0.0;
  const double x = static_cast<double>(i) * h, y = static_cast<double>(j) * h, z = static_cast<double>(k) * h;
  switch (b) {
    case boundary::harmonic: return x * x - y * y + z;
    case boundary::ones: return 1.0;
    case boundary::face: return std::nullopt;
  }
  return std::nullopt;
}

inline bool on_boundary(std::int64_t n, std::int64_t i, std::int64_t j, std::int64_t k) {
  return i == 0 || j == 0 || k == 0 || i == n - 1 || j == n - 1 || k == n - 1;
}

// The initial field: boundary values on the boundary, 0 inside.
template <class T>
std::vector<T> initial_field(std::int64_t n, boundary b) {
  std::vector<T> u(static_cast<std::size_t>(n * n * n), T(0));
  for (std::int64_t k = 0; k < n; ++k) {
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t i = 0; i < n; ++i) {
        if (!on_boundary(n, i, j, k)) continue;
        double v = 0;
        if (b == boundary::face) v = k == 0 ? 1.0 : 0.0;
        else v = *exact_value(b, n, i, j, k);
        u[static_cast<std::size_t>(i + n * (j + n * k))] = static_cast<T>(v);
      }
    }
  }
  return u;
}

// One sweep: v = the update of u at interior points (boundary points of v are untouched).
template <class T>
void sweep_cpu(std::int64_t n, const T* u, T* v) {
  const T sixth = T(1) / T(6);
  const std::int64_t sy = n, sz = n * n;
  for (std::int64_t k = 1; k < n - 1; ++k) {
    for (std::int64_t j = 1; j < n - 1; ++j) {
      for (std::int64_t i = 1; i < n - 1; ++i) {
        const std::int64_t p = i + sy * j + sz * k;
        v[p] = (u[p - 1] + u[p + 1] + u[p - sy] + u[p + sy] + u[p - sz] + u[p + sz]) * sixth;
      }
    }
  }
}

// `iterations` sweeps from the initial field; returns the final field.
template <class T>
std::vector<T> iterate_cpu(std::int64_t n, boundary b, int iterations) {
  std::vector<T> u = initial_field<T>(n, b);
  std::vector<T> v = u;
  for (int it = 0; it < iterations; ++it) {
    sweep_cpu(n, u.data(), v.data());
    u.swap(v);
  }
  return u;
}

}  // namespace scanlab::jacobi
