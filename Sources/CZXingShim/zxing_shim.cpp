// zxing-cpp 1.4 behind the C API of include/zxing_shim.h. Why each choice is made is said in
// the header; here, only how.

// 1.4's Result::text() is std::wstring unless this is defined; with it, text() is the content
// converted to UTF-8 (by ECI, else by zxing's character-set guess), which is what Swift wants.
#define ZX_USE_UTF8 1

#include "zxing_shim.h"

#include <ZXing/DecodeHints.h>
#include <ZXing/ImageView.h>
#include <ZXing/ReadBarcode.h>
#include <ZXing/Result.h>
#include <ZXing/ZXVersion.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

namespace {

void write_error(char *error, size_t capacity, const char *message) {
    if (error == nullptr || capacity == 0) return;
    std::snprintf(error, capacity, "%s", message);
}

ZXing::DecodeHints qr_hints() {
    ZXing::DecodeHints hints;
    hints.setFormats(ZXing::BarcodeFormat::QRCode);
    hints.setTryHarder(true);
    hints.setTryRotate(false);
    hints.setReturnErrors(true);
    hints.setMaxNumberOfSymbols(1);
    return hints;
}

}  // namespace

extern "C" zxing_shim_status zxing_shim_read_qr(const uint8_t *plane, int width, int height, int stride, int invert,
                                                uint8_t *text, size_t text_capacity, size_t *text_length,
                                                char *error, size_t error_capacity) {
    if (text_length != nullptr) *text_length = 0;
    if (plane == nullptr || text == nullptr || text_length == nullptr || width <= 0 || height <= 0 || stride < width) {
        write_error(error, error_capacity, "the plane's pointer, size or stride is not valid");
        return ZXING_SHIM_BAD_ARGUMENT;
    }
    if (width > ZXING_SHIM_MAXIMUM_DIMENSION || height > ZXING_SHIM_MAXIMUM_DIMENSION) {
        write_error(error, error_capacity, "the plane is larger than the shim accepts");
        return ZXING_SHIM_TOO_LARGE;
    }
    try {
        std::vector<uint8_t> negative;
        const uint8_t *pixels = plane;
        int rowStride = stride;
        if (invert) {
            negative.resize(static_cast<size_t>(width) * static_cast<size_t>(height));
            for (int y = 0; y < height; ++y) {
                const uint8_t *row = plane + static_cast<size_t>(y) * static_cast<size_t>(stride);
                uint8_t *out = negative.data() + static_cast<size_t>(y) * static_cast<size_t>(width);
                for (int x = 0; x < width; ++x) out[x] = static_cast<uint8_t>(255 - row[x]);
            }
            pixels = negative.data();
            rowStride = width;
        }
        static const ZXing::DecodeHints hints = qr_hints();
        ZXing::ImageView image(pixels, width, height, ZXing::ImageFormat::Lum, rowStride);
        ZXing::Result result = ZXing::ReadBarcode(image, hints);
        // 1.4 reports a located code it could not decode as an error, sometimes with format()
        // None (seen with a checksum error): the error decides, not the format.
        if (result.error()) return ZXING_SHIM_FOUND_NOT_DECODED;
        if (result.format() == ZXing::BarcodeFormat::None) return ZXING_SHIM_NOTHING_FOUND;
        if (!result.isValid()) return ZXING_SHIM_FOUND_NOT_DECODED;
        const std::string decoded = result.text();
        *text_length = decoded.size();
        if (decoded.size() > text_capacity) return ZXING_SHIM_TEXT_TOO_LONG;
        std::memcpy(text, decoded.data(), decoded.size());
        return ZXING_SHIM_DECODED;
    } catch (const std::bad_alloc &) {
        write_error(error, error_capacity, "out of memory");
        return ZXING_SHIM_FAILED;
    } catch (const std::exception &exception) {
        write_error(error, error_capacity, exception.what());
        return ZXING_SHIM_FAILED;
    } catch (...) {
        write_error(error, error_capacity, "zxing-cpp threw an unknown exception");
        return ZXING_SHIM_FAILED;
    }
}

extern "C" const char *zxing_shim_version(void) {
#define ZXING_SHIM_STRING2(x) #x
#define ZXING_SHIM_STRING(x) ZXING_SHIM_STRING2(x)
    return ZXING_SHIM_STRING(ZXING_VERSION_MAJOR) "." ZXING_SHIM_STRING(ZXING_VERSION_MINOR) "." ZXING_SHIM_STRING(ZXING_VERSION_PATCH);
}
