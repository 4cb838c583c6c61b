// A plain C face over zxing-cpp 1.4 (Debian libzxing-dev), QR codes only, for Swift.
//
// Swift imports this header as module CZXingShim and never sees C++: Swift's C++ interop
// would spread to every module that imports the wrapper. Every entry point catches every
// C++ exception and turns it into a status, so none can unwind into Swift.
#ifndef GATEPASS_ZXING_SHIM_H
#define GATEPASS_ZXING_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What one read of a grey plane came to.
typedef enum zxing_shim_status {
    /// A QR code was decoded; its text is in the caller's buffer.
    ZXING_SHIM_DECODED = 0,
    /// No QR code was found.
    ZXING_SHIM_NOTHING_FOUND = 1,
    /// A QR code was located (finder patterns, grid) but not decoded: too damaged, a checksum or
    /// format error (zxing's `DecodeHints::setReturnErrors(true)`). No text is given.
    /// Measured with Debian's 1.4.0: only the pure-image path reports this (a QR code with
    /// damaged data modules gives ChecksumError with isPure, nothing at all without); camera
    /// frames, read without isPure, get ZXING_SHIM_NOTHING_FOUND for such a code.
    ZXING_SHIM_FOUND_NOT_DECODED = 2,
    /// Width, height or stride make no sense (zero, negative, stride smaller than width), or a
    /// pointer is missing. Nothing was read.
    ZXING_SHIM_BAD_ARGUMENT = -1,
    /// The plane is larger than ZXING_SHIM_MAXIMUM_DIMENSION on a side; refused before any
    /// allocation.
    ZXING_SHIM_TOO_LARGE = -2,
    /// The decoded text (as UTF-8) does not fit the caller's buffer; `text_length` says how
    /// long it is.
    ZXING_SHIM_TEXT_TOO_LONG = -3,
    /// zxing threw: out of memory (`std::bad_alloc`) or any other exception. `error` says what.
    ZXING_SHIM_FAILED = -4,
} zxing_shim_status;

/// The longest side accepted, in pixels (the scanner's image files stop at 8192 too).
#define ZXING_SHIM_MAXIMUM_DIMENSION 8192

/// Reads one QR code from an 8-bit grey plane with zxing-cpp's `ReadBarcode`
/// (formats: QRCode only; tryHarder on, tryRotate off — a QR code reads at any angle without it).
///
/// - plane: `height` rows of `stride` bytes, the first `width` of each row being pixels. Only
///   read during the call.
/// - invert: non-zero to read the negative (light modules on a dark ground, phones in dark
///   mode): zxing 1.4 has no `tryInvert`, so the plane is inverted into a copy first.
/// - text / text_capacity: where the decoded text goes, as UTF-8 bytes (not NUL-terminated);
///   `*text_length` is set to its length (also when it did not fit).
/// - error / error_capacity: a NUL-terminated sentence for ZXING_SHIM_FAILED; may be NULL.
zxing_shim_status zxing_shim_read_qr(const uint8_t *plane, int width, int height, int stride, int invert,
                                     uint8_t *text, size_t text_capacity, size_t *text_length,
                                     char *error, size_t error_capacity);

/// zxing-cpp's version as the library reports it at build time ("1.4.0").
const char *zxing_shim_version(void);

#ifdef __cplusplus
}
#endif

#endif
