#include "history/phase_family.h"

#include "protocol/utf8.h"

namespace trtwatch::history {

std::string PhaseFamily(std::string_view phase) {
  // Digits are ASCII, so folding them never splits a character of the valid text.
  const std::string valid = ValidUtf8(phase);
  std::string family;
  family.reserve(valid.size());
  for (size_t i = 0; i < valid.size();) {
    if (valid[i] >= '0' && valid[i] <= '9') {
      family += 'N';
      while (i < valid.size() && valid[i] >= '0' && valid[i] <= '9') ++i;
    } else {
      family += valid[i++];
    }
  }
  if (family.size() > kMaxPhaseFamilyBytes) {
    size_t cut = kMaxPhaseFamilyBytes;
    // Back to the start of the character the cut falls in (continuation bytes: 10xxxxxx).
    while (cut > 0 && (static_cast<unsigned char>(family[cut]) & 0xC0) == 0x80) --cut;
    family.resize(cut);
    family += "\xE2\x80\xA6";  // U+2026 …
  }
  return family;
}

}  // namespace trtwatch::history
