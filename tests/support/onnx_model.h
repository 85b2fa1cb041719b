// ONNX models as bytes for the tests: the few protobuf messages the build key reads
// (ModelProto -> GraphProto -> initializer TensorProto with external data), written
// in protobuf's wire format by hand, so no protobuf library is needed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trtwatch::testing {

inline std::string Varint(uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
  return out;
}

// A length-delimited field (a string, bytes or a nested message).
inline std::string Field(uint32_t number, const std::string& bytes) {
  return Varint(uint64_t{number} << 3 | 2) + Varint(bytes.size()) + bytes;
}

inline std::string VarintField(uint32_t number, uint64_t value) { return Varint(uint64_t{number} << 3) + Varint(value); }

// A TensorProto named `name`: its bytes inline (raw_data) when `location` is empty,
// else stored externally in the file `location`, relative to the model.
inline std::string Tensor(const std::string& name, const std::string& location, const std::string& raw = "\x01\x02") {
  std::string tensor = VarintField(1, 1) + VarintField(2, 1) + Field(8, name);  // dims, data_type FLOAT, name
  if (location.empty()) return tensor + Field(9, raw);                          // raw_data
  return tensor + Field(13, Field(1, "location") + Field(2, location)) +        // external_data
         Field(13, Field(1, "offset") + Field(2, "0")) + VarintField(14, 1);    // data_location EXTERNAL
}

// A ModelProto whose graph has one node and `initializers`.
inline std::string OnnxModel(const std::vector<std::string>& initializers) {
  std::string graph = Field(1, Field(1, "x") + Field(2, "y") + Field(4, "Relu")) + Field(2, "g");  // node, name
  for (const std::string& tensor : initializers) graph += Field(5, tensor);
  return VarintField(1, 8) + Field(2, "trtwatch-tests") + Field(7, graph);  // ir_version, producer, graph
}

}  // namespace trtwatch::testing
