#include "keys/onnx_external_data.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <set>
#include <stdexcept>

#include "protocol/utf8.h"

namespace trtwatch::keys {

namespace {

constexpr int kMaxDepth = 64;               // graphs in attributes in graphs...
constexpr uint64_t kMaxLocationBytes = 4096;  // and so every string read here
constexpr size_t kBufferBytes = 1 << 16;

// Field numbers of onnx.proto3 (the messages that can hold a tensor).
enum class Message { kModel, kGraph, kNode, kAttribute, kFunction, kSparseTensor, kTensor, kEntry };
struct Nested {
  Message message;
  uint32_t field;
  Message child;
};
constexpr Nested kNested[] = {
    {Message::kModel, 7, Message::kGraph},           {Message::kModel, 25, Message::kFunction},
    {Message::kGraph, 1, Message::kNode},            {Message::kGraph, 5, Message::kTensor},
    {Message::kGraph, 15, Message::kSparseTensor},   {Message::kNode, 5, Message::kAttribute},
    {Message::kAttribute, 5, Message::kTensor},      {Message::kAttribute, 6, Message::kGraph},
    {Message::kAttribute, 10, Message::kTensor},     {Message::kAttribute, 11, Message::kGraph},
    {Message::kAttribute, 22, Message::kSparseTensor}, {Message::kAttribute, 23, Message::kSparseTensor},
    {Message::kFunction, 7, Message::kNode},         {Message::kFunction, 11, Message::kAttribute},
    {Message::kSparseTensor, 1, Message::kTensor},   {Message::kSparseTensor, 2, Message::kTensor},
};
constexpr uint32_t kTensorExternalData = 13;  // repeated StringStringEntryProto
constexpr uint32_t kTensorDataLocation = 14;  // enum: 1 EXTERNAL
constexpr uint32_t kEntryKey = 1;
constexpr uint32_t kEntryValue = 2;

struct Damaged : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Sequential reads with skips that seek past what is not in the buffer.
class WireReader {
 public:
  WireReader(std::ifstream& file, uint64_t size) : file_(file), size_(size), buffer_(kBufferBytes) {}

  uint64_t position() const { return position_; }
  uint64_t size() const { return size_; }

  uint8_t Byte() {
    if (next_ == filled_) Fill();
    ++position_;
    return static_cast<uint8_t>(buffer_[next_++]);
  }

  uint64_t Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const uint8_t b = Byte();
      value |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return value;
    }
    throw Damaged("a varint longer than 10 bytes");
  }

  void Skip(uint64_t bytes, uint64_t end) {
    if (bytes > end - position_) throw Damaged("a field runs past its message");
    const uint64_t buffered = filled_ - next_;
    if (bytes <= buffered) {
      next_ += static_cast<size_t>(bytes);
    } else {
      file_.clear();
      if (!file_.seekg(static_cast<std::streamoff>(position_ + bytes))) throw Damaged("cannot seek");
      next_ = filled_ = 0;
    }
    position_ += bytes;
  }

  std::string Text(uint64_t bytes, uint64_t end) {
    if (bytes > kMaxLocationBytes) throw Damaged("an external-data entry longer than 4096 bytes");
    if (bytes > end - position_) throw Damaged("a field runs past its message");
    std::string text;
    for (uint64_t i = 0; i < bytes; ++i) text += static_cast<char>(Byte());
    return text;
  }

 private:
  void Fill() {
    file_.read(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    filled_ = static_cast<size_t>(file_.gcount());
    next_ = 0;
    if (filled_ == 0) throw Damaged("the file ends inside a message");
  }

  std::ifstream& file_;
  const uint64_t size_;
  std::vector<char> buffer_;
  size_t next_ = 0;
  size_t filled_ = 0;
  uint64_t position_ = 0;
};

std::optional<Message> ChildOf(Message message, uint32_t field) {
  for (const Nested& n : kNested) {
    if (n.message == message && n.field == field) return n.child;
  }
  return std::nullopt;
}

class Scanner {
 public:
  explicit Scanner(WireReader& reader) : reader_(reader) {}

  void Model() { Walk(Message::kModel, reader_.size(), 0); }
  const std::set<std::string>& locations() const { return locations_; }

 private:
  // Walks one message ending at `end`; returns the tensor's location when it is one
  // stored externally.
  void Walk(Message message, uint64_t end, int depth) {
    if (depth > kMaxDepth) throw Damaged("messages nested more than 64 deep");
    std::string location;
    bool external = false;
    std::string entry_key, entry_value;
    while (reader_.position() < end) {
      const uint64_t tag = reader_.Varint();
      const uint32_t field = static_cast<uint32_t>(tag >> 3);
      switch (tag & 7) {
        case 0: {
          const uint64_t value = reader_.Varint();
          if (message == Message::kTensor && field == kTensorDataLocation) external = value == 1;
          break;
        }
        case 1:
          reader_.Skip(8, end);
          break;
        case 5:
          reader_.Skip(4, end);
          break;
        case 2: {
          const uint64_t length = reader_.Varint();
          if (length > end - reader_.position()) throw Damaged("a field runs past its message");
          const uint64_t field_end = reader_.position() + length;
          if (message == Message::kTensor && field == kTensorExternalData) {
            ReadEntry(field_end, &entry_key, &entry_value);
            if (entry_key == "location") location = entry_value;
          } else if (std::optional<Message> child = ChildOf(message, field)) {
            Walk(*child, field_end, depth + 1);
          } else {
            reader_.Skip(length, end);
          }
          break;
        }
        default:
          throw Damaged("a field of wire type " + std::to_string(tag & 7) + ", which ONNX does not use");
      }
    }
    if (reader_.position() != end) throw Damaged("a message runs past its end");
    if (message == Message::kTensor && external) {
      if (location.empty()) throw Damaged("a tensor stored externally without a location");
      locations_.insert(location);
    }
  }

  void ReadEntry(uint64_t end, std::string* key, std::string* value) {
    key->clear();
    value->clear();
    while (reader_.position() < end) {
      const uint64_t tag = reader_.Varint();
      if ((tag & 7) != 2) throw Damaged("an external-data entry that is not two strings");
      const uint64_t length = reader_.Varint();
      std::string text = reader_.Text(length, end);
      if ((tag >> 3) == kEntryKey) *key = std::move(text);
      if ((tag >> 3) == kEntryValue) *value = std::move(text);
    }
  }

  WireReader& reader_;
  std::set<std::string> locations_;
};

// A location for a message: valid UTF-8, bounded, control characters as '?'.
std::string Shown(const std::string& location) {
  std::string shown = ValidBoundedText(location, 200);
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return shown;
}

}  // namespace

std::string CheckLocation(const std::string& location) {
  if (location.empty()) return "is empty";
  if (location.size() > kMaxLocationBytes) return "is longer than 4096 bytes";
  if (ValidUtf8(location) != location) return "is not valid UTF-8";
  for (unsigned char c : location) {
    if (c < 0x20 || c == 0x7f) return "holds a control character";
  }
  if (location[0] == '/' || location[0] == '\\' || (location.size() > 1 && location[1] == ':')) {
    return "is absolute; ONNX reads external data relative to the model's folder";
  }
  size_t begin = 0;
  while (begin <= location.size()) {
    size_t end = location.find_first_of("/\\", begin);
    if (end == std::string::npos) end = location.size();
    if (location.compare(begin, end - begin, "..") == 0) return "leads out of the model's folder (\"..\")";
    begin = end + 1;
  }
  return "";
}

ExternalDataOutcome FindExternalData(const std::string& model_path) {
  ExternalDataOutcome outcome;
  std::ifstream file(model_path, std::ios::binary | std::ios::ate);
  const std::streamoff size = file ? static_cast<std::streamoff>(file.tellg()) : -1;
  if (size < 0 || !file.seekg(0)) {
    outcome.error = "cannot open the model \"" + model_path + "\" to find its external data";
    return outcome;
  }
  WireReader reader(file, static_cast<uint64_t>(size));
  Scanner scanner(reader);
  try {
    scanner.Model();
  } catch (const Damaged& damaged) {
    outcome.error = "\"" + model_path + "\" is not a readable ONNX model (" + damaged.what() + " at byte " +
                    std::to_string(reader.position()) + "): give the .onnx file the build reads";
    return outcome;
  }
  std::vector<std::string> locations(scanner.locations().begin(), scanner.locations().end());
  for (const std::string& location : locations) {
    const std::string problem = CheckLocation(location);
    if (!problem.empty()) {
      outcome.error = "the model \"" + model_path + "\" names external data \"" + Shown(location) + "\" that " + problem +
                      ": keep the weights files next to the model, named relative to it";
      return outcome;
    }
  }
  outcome.locations = std::move(locations);
  return outcome;
}

}  // namespace trtwatch::keys
