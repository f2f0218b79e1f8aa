// Input datasets larger than memory: a .npy's or a raw file's elements memory-mapped instead of
// read (issue #24: the apps' streaming path), and input_array, the one type the apps hold an
// input in, mapped or in memory.
//
// The mapping is read-only and private (PROT_READ, MAP_PRIVATE; the file opened O_RDONLY):
// nothing the app does can change the file. Pages are read by the kernel as they are touched
// (madvise MADV_SEQUENTIAL: read ahead, dropped behind), so a 16 GB file costs address space,
// not 16 GB of memory; it is pageable memory, which the streaming layer copies through its
// pinned staging buffers. The checks are read_npy's and read_raw's (a bad or truncated header,
// data shorter or longer than the shape needs, a raw size that is not a whole number of
// elements: one io_error naming the file) and come before anything is mapped.
//
// One limit of mapping: a file truncated by another process while it is mapped makes the
// next access to the lost pages raise SIGBUS (the process dies), where read() would have
// returned a short count. The apps map only their input files, for the length of one run.
#pragma once

#include "common/array.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace scanlab::io {

class input_file;

// The elements of a file, mapped read-only. Move-only; unmapped when destroyed.
class mapped_array {
 public:
  mapped_array() = default;
  mapped_array(mapped_array&& other) noexcept;
  mapped_array& operator=(mapped_array&& other) noexcept;
  mapped_array(const mapped_array&) = delete;
  mapped_array& operator=(const mapped_array&) = delete;
  ~mapped_array();

  // Maps `file`'s bytes from `offset` on as elements of `type` in `shape` (C order); the caller
  // has checked that the file holds exactly them. `offset` must be a multiple of the element
  // size (std::invalid_argument otherwise: the elements would be misaligned); io_error naming
  // the file when mmap fails. A shape without elements maps nothing.
  mapped_array(const input_file& file, std::uint64_t offset, dtype type, std::vector<std::int64_t> shape);

  [[nodiscard]] dtype type() const noexcept { return type_; }
  [[nodiscard]] const std::vector<std::int64_t>& shape() const noexcept { return shape_; }
  [[nodiscard]] std::int64_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return static_cast<std::size_t>(size_) * size_of(type_); }
  [[nodiscard]] const std::byte* data() const noexcept { return data_; }

 private:
  void unmap() noexcept;

  dtype type_ = dtype::u8;
  std::vector<std::int64_t> shape_;
  std::int64_t size_ = 0;
  void* base_ = nullptr;  // what mmap returned (the file's start)
  std::size_t map_bytes_ = 0;
  const std::byte* data_ = nullptr;
};

// A .npy file's data (header checked as read_npy checks it), mapped. std::invalid_argument
// where its data offset is not a multiple of the element size (a header not padded as NumPy
// pads it): read such a file with read_npy.
mapped_array map_npy(const std::filesystem::path& path);

// A raw file of `type` elements (its size a whole number of them, as read_raw), mapped as 1-D.
mapped_array map_raw(const std::filesystem::path& path, dtype type);

// An input dataset: memory-mapped from its file (.npy, raw), or held in memory (text, standard
// input, generated data, or a .npy whose elements the mapping would misalign).
class input_array {
 public:
  input_array() = default;
  explicit input_array(host_array array) : storage_(std::move(array)) {}
  explicit input_array(mapped_array array) : storage_(std::move(array)) {}

  [[nodiscard]] bool is_mapped() const noexcept { return std::holds_alternative<mapped_array>(storage_); }
  [[nodiscard]] dtype type() const noexcept;
  [[nodiscard]] const std::vector<std::int64_t>& shape() const noexcept;
  [[nodiscard]] std::int64_t size() const noexcept;
  [[nodiscard]] std::size_t bytes() const noexcept { return static_cast<std::size_t>(size()) * size_of(type()); }
  [[nodiscard]] const std::byte* data() const noexcept;

  // A typed view; std::invalid_argument if T is not this array's dtype.
  template <class T>
  [[nodiscard]] std::span<const T> as() const {
    if (dtype_of<T>() != type()) {
      throw std::invalid_argument("input holds " + std::string(name(type())) + ", not " + std::string(name(dtype_of<T>())));
    }
    return {reinterpret_cast<const T*>(data()), static_cast<std::size_t>(size())};
  }

  // The elements as a host_array (for the in-memory path): the array held moved out, or the
  // mapped elements copied into a new one (io_error naming `source` where memory runs out).
  // The input_array is empty afterwards.
  [[nodiscard]] host_array take(const std::filesystem::path& source);

 private:
  std::variant<host_array, mapped_array> storage_;
};

}  // namespace scanlab::io
