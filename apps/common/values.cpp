#include "common/values.hpp"

#include "common/dataset.hpp"

#include <span>
#include <stdexcept>
#include <type_traits>

namespace scanlab::io {

std::string text_of(const host_array& values, std::int64_t i) {
  return visit(values.type(), [&]<class V>() { return format_value(values.as<V>()[static_cast<std::size_t>(i)]); });
}

host_array parse_value(const std::string& option, const std::string& text, dtype type) {
  const std::string expected = option + " '" + text + "': expected one " + std::string(name(type)) + " value";
  host_array value;
  try {
    value = parse_text(text, "value.txt", type, "");
  } catch (const std::exception& e) {
    throw std::invalid_argument(expected + ": " + e.what());
  }
  if (value.size() != 1) throw std::invalid_argument(expected);
  return value;
}

std::vector<std::int64_t> load_offsets(const std::string& path, std::int64_t n) {
  const host_array file = read_dataset(path, {.type = dtype::i64});
  if (is_float(file.type())) {
    throw std::runtime_error("--offsets " + path + ": integers expected, not " + std::string(name(file.type())));
  }
  const host_array wide = convert(file, dtype::i64, path);
  const std::span<const std::int64_t> o = wide.as<std::int64_t>();
  if (o.size() < 2) {
    throw std::runtime_error("--offsets " + path + ": " + std::to_string(o.size()) +
                             " values; segment s is [offsets[s], offsets[s + 1]), so at least 2 are needed");
  }
  for (std::size_t i = 0; i < o.size(); ++i) {
    if (o[i] < 0 || o[i] > n) {
      throw std::runtime_error("--offsets " + path + ": offsets[" + std::to_string(i) + "] = " + std::to_string(o[i]) +
                               " lies outside [0, " + std::to_string(n) + "] (the input's length)");
    }
    if (i > 0 && o[i] < o[i - 1]) {
      throw std::runtime_error("--offsets " + path + ": offsets[" + std::to_string(i) + "] = " +
                               std::to_string(o[i]) + " is below offsets[" + std::to_string(i - 1) +
                               "] = " + std::to_string(o[i - 1]) + " (they must not decrease)");
    }
  }
  return {o.begin(), o.end()};
}

key_array load_keys(const std::string& path, std::int64_t n) {
  const host_array file = read_dataset(path, {.type = dtype::i64});
  if (is_float(file.type())) {
    throw std::runtime_error("--keys " + path + ": integer keys expected, not " + std::string(name(file.type())) +
                             " (NaN and -0.0 make float equality a poor segment key)");
  }
  if (file.size() != n) {
    throw std::runtime_error("--keys " + path + ": " + std::to_string(file.size()) + " keys for " + std::to_string(n) +
                             " values (one key per value)");
  }
  const bool narrow = visit(file.type(), [&]<class K>() { return sizeof(K) <= 4; });
  if (narrow) return {convert(file, dtype::u32, path), file.type()};  // injective for every integer type of <= 4 bytes
  return {visit(file.type(),
                [&]<class K>() {
                  host_array bits(dtype::u64, {file.size()});
                  const std::span<const K> k = file.as<K>();
                  const std::span<std::uint64_t> b = bits.as<std::uint64_t>();
                  for (std::size_t i = 0; i < k.size(); ++i) b[i] = static_cast<std::uint64_t>(k[i]);
                  return bits;
                }),
          file.type()};
}

host_array keys_as(const host_array& bits, dtype type) {
  host_array keys(type, {bits.size()});
  visit(bits.type(), [&]<class B>() {
    visit(type, [&]<class K>() {
      if constexpr (std::is_integral_v<K> && std::is_integral_v<B>) {
        const std::span<const B> b = bits.as<B>();
        const std::span<K> k = keys.as<K>();
        for (std::size_t i = 0; i < b.size(); ++i) k[i] = static_cast<K>(b[i]);  // undoes load_keys' cast
      } else {
        throw std::logic_error("keys_as: integer keys expected");
      }
    });
  });
  return keys;
}

std::vector<std::int64_t> run_offsets(const host_array& bits) {
  std::vector<std::int64_t> offsets{0};
  visit(bits.type(), [&]<class K>() {
    const std::span<const K> k = bits.as<K>();
    for (std::size_t i = 1; i < k.size(); ++i) {
      if (k[i] != k[i - 1]) offsets.push_back(static_cast<std::int64_t>(i));
    }
    if (!k.empty()) offsets.push_back(static_cast<std::int64_t>(k.size()));
  });
  return offsets;
}

}  // namespace scanlab::io
