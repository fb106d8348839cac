// OpenJPH's C++ encoder behind a C interface for Swift: its errors (which it reports by throwing after calling the
// error handler) become messages in the caller's buffer, and its info and warning messages are not printed.
#include "htj2k_shim.h"

#include <openjph/ojph_arch.h>
#include <openjph/ojph_codestream.h>
#include <openjph/ojph_file.h>
#include <openjph/ojph_mem.h>
#include <openjph/ojph_message.h>
#include <openjph/ojph_params.h>

#include <cstdarg>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>

namespace {

// OpenJPH's handlers are process-wide: the error one throws the formatted message, the others stay silent.
struct ThrowingError : ojph::message_error {
    void operator()(int, const char *, int, const char *format, ...) override {
        char message[256];
        va_list arguments;
        va_start(arguments, format);
        vsnprintf(message, sizeof message, format, arguments);
        va_end(arguments);
        throw std::runtime_error(message);
    }
};

struct Silent : ojph::message_info {
    void operator()(int, const char *, int, const char *, ...) override {}
};

struct SilentWarning : ojph::message_warning {
    void operator()(int, const char *, int, const char *, ...) override {}
};

void configureMessages() {
    static std::once_flag once;
    std::call_once(once, [] {
        static ThrowingError error;
        static Silent info;
        static SilentWarning warning;
        ojph::configure_error(&error);
        ojph::configure_info(&info);
        ojph::configure_warning(&warning);
    });
}

// OpenJPH's output over the caller's C file.
struct FileOutput : ojph::outfile_base {
    FILE *file;
    explicit FileOutput(FILE *file) : file(file) {}
    size_t write(const void *pointer, size_t size) override { return fwrite(pointer, 1, size, file); }
    ojph::si64 tell() override { return ftello(file); }
    void flush() override { fflush(file); }
};

void report(const std::exception &exception, char *error, size_t size) {
    if (size > 0) {
        strncpy(error, exception.what(), size - 1);
        error[size - 1] = 0;
    }
}

}  // namespace

struct tessera_htj2k_encoder {
    ojph::codestream codestream;
    FileOutput output;
    uint32_t width, height, components, bitDepth;
    ojph::line_buf *line = nullptr;
    uint32_t nextComponent = 0;
    explicit tessera_htj2k_encoder(FILE *file) : output(file) {}
};

extern "C" tessera_htj2k_encoder *tessera_htj2k_start(FILE *file, uint32_t width, uint32_t height,
                                                      uint32_t components, uint32_t bit_depth, int reversible,
                                                      float quantization_step, uint32_t decompositions,
                                                      char *error, size_t error_size) {
    configureMessages();
    tessera_htj2k_encoder *encoder = nullptr;
    try {
        encoder = new tessera_htj2k_encoder(file);
        encoder->width = width;
        encoder->height = height;
        encoder->components = components;
        encoder->bitDepth = bit_depth;
        ojph::param_siz siz = encoder->codestream.access_siz();
        siz.set_image_extent(ojph::point(width, height));
        siz.set_num_components(components);
        for (uint32_t component = 0; component < components; component++) {
            siz.set_component(component, ojph::point(1, 1), bit_depth, false);
        }
        siz.set_image_offset(ojph::point(0, 0));
        siz.set_tile_size(ojph::size(width, height));
        siz.set_tile_offset(ojph::point(0, 0));
        ojph::param_cod cod = encoder->codestream.access_cod();
        cod.set_num_decomposition(decompositions);
        cod.set_block_dims(64, 64);
        cod.set_progression_order("RPCL");
        cod.set_color_transform(components >= 3);
        cod.set_reversible(reversible != 0);
        if (!reversible) encoder->codestream.access_qcd().set_irrev_quant(quantization_step);
        encoder->codestream.set_planar(false);
        encoder->codestream.write_headers(&encoder->output);
        encoder->line = encoder->codestream.exchange(nullptr, encoder->nextComponent);
        return encoder;
    } catch (const std::exception &exception) {
        report(exception, error, error_size);
        delete encoder;
        return nullptr;
    }
}

extern "C" int tessera_htj2k_write_row(tessera_htj2k_encoder *encoder, const void *row, char *error,
                                       size_t error_size) {
    try {
        for (uint32_t component = 0; component < encoder->components; component++) {
            if (encoder->nextComponent != component) throw std::runtime_error("components out of order");
            ojph::si32 *samples = encoder->line->i32;
            if (encoder->bitDepth <= 8) {
                const uint8_t *source = static_cast<const uint8_t *>(row) + component;
                for (uint32_t x = 0; x < encoder->width; x++) samples[x] = source[x * encoder->components];
            } else {
                const uint16_t *source = static_cast<const uint16_t *>(row) + component;
                for (uint32_t x = 0; x < encoder->width; x++) samples[x] = source[x * encoder->components];
            }
            encoder->line = encoder->codestream.exchange(encoder->line, encoder->nextComponent);
        }
        return 1;
    } catch (const std::exception &exception) {
        report(exception, error, error_size);
        return 0;
    }
}

extern "C" int tessera_htj2k_finish(tessera_htj2k_encoder *encoder, char *error, size_t error_size) {
    try {
        encoder->codestream.flush();
        return 1;
    } catch (const std::exception &exception) {
        report(exception, error, error_size);
        return 0;
    }
}

extern "C" void tessera_htj2k_destroy(tessera_htj2k_encoder *encoder) {
    delete encoder;
}
