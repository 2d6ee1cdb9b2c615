// The typed error every decoder throws on bad input. `section` names where in the bitstream the
// problem is (e.g. "header", "SCAL", "DATA"), so a user can act on the message.
#pragma once
#include <stdexcept>
#include <string>

namespace kvstream::codec {

enum class BitstreamErrorKind {
  kTruncated,           // fewer bytes than the header or a section declares
  kBadMagic,            // not a kvstream bitstream
  kUnsupportedVersion,  // a version this build cannot read
  kChecksumMismatch,    // CRC32C over the bitstream does not match
  kBadShape,            // L, H, D or T absent, zero or absurd
  kBadLevelSpec,        // level spec inconsistent with the shape or out of the supported range
  kBadSection,          // a section is missing, repeated or of the wrong size
  kCorruptPayload,      // payload contents violate an invariant (e.g. a symbol outside the alphabet)
  kUnknownCodec,        // codec id not known to this build
  kMissingCdfTable,     // an offline CDF table the bitstream references was not provided
  kImplausibleValue,    // CRC-valid, but it decodes to a value no encoder writes (codec/decoded_values.h)
};

const char* to_string(BitstreamErrorKind kind);

class BitstreamError : public std::runtime_error {
 public:
  BitstreamError(BitstreamErrorKind kind, std::string section, const std::string& detail)
      : std::runtime_error(std::string(to_string(kind)) + " in " + section + ": " + detail),
        kind_(kind),
        section_(std::move(section)) {}
  BitstreamErrorKind kind() const { return kind_; }
  const std::string& section() const { return section_; }

 private:
  BitstreamErrorKind kind_;
  std::string section_;
};

}  // namespace kvstream::codec
