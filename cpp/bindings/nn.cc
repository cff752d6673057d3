// Bindings of the neural-network ops (cpp/ops/nn.h); python/gpuaccel/nn.py gives them TF's
// names and argument conventions.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/bindings.h"
#include "bindings/op_recording.h"
#include "core/errors.h"
#include "ops/nn.h"
#include "ops/post_activation.h"
#include "ops/rnn.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

namespace {
Tensor or_undefined(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

RnnCell parse_rnn_cell(const std::string& name) {
  if (name == "lstm") return RnnCell::kLstm;
  if (name == "gru") return RnnCell::kGru;
  if (name == "simple_rnn") return RnnCell::kTanh;
  throw_error(ErrorCode::kValue, "CudnnRNN",
              "cell must be 'lstm', 'gru' or 'simple_rnn', got '" + name + "'");
}
}  // namespace

void init_nn(py::module_& m) {
  m.def("conv2d", [](const Tensor& x, const Tensor& w, std::optional<Tensor> bias, int64_t sh,
                     int64_t sw, const std::string& padding, int64_t dh, int64_t dw,
                     const std::string& activation, int64_t groups) {
    const Padding pad = parse_padding(padding, "Conv2D");
    const PostActivation act = parse_post_activation(activation, "Conv2D");
    return recorded_op({x, w, or_undefined(bias)}, [=](const std::vector<Tensor>& in) {
      return conv2d(in[0], in[1], in[2], sh, sw, pad, dh, dw, act, groups);
    });
  }, py::arg("x"), py::arg("w"), py::arg("bias"), py::arg("stride_h"), py::arg("stride_w"),
     py::arg("padding"), py::arg("dilation_h"), py::arg("dilation_w"),
     py::arg("activation") = "linear", py::arg("groups") = 1);
  // Keras's and TF's transposed convolution: an output of (out_h, out_w), 'valid'/'same' padding
  // resolved as TF resolves the convolution of that output.
  m.def("conv2d_transpose", [](const Tensor& x, const Tensor& w, std::optional<Tensor> bias, int64_t out_h,
                               int64_t out_w, int64_t sh, int64_t sw, const std::string& padding, int64_t dh,
                               int64_t dw) {
    const Padding pad = parse_padding(padding, "Conv2DTranspose");
    return recorded_op({x, w, or_undefined(bias)}, [=](const std::vector<Tensor>& in) {
      return conv2d_transpose(in[0], in[1], in[2], out_h, out_w, sh, sw, pad, dh, dw);
    });
  }, py::arg("x"), py::arg("w"), py::arg("bias"), py::arg("out_h"), py::arg("out_w"), py::arg("stride_h"),
     py::arg("stride_w"), py::arg("padding"), py::arg("dilation_h") = 1, py::arg("dilation_w") = 1);
  // torch's: explicit padding of the convolution of the output (top, bottom, left, right).
  m.def("conv2d_transpose_padded", [](const Tensor& x, const Tensor& w, std::optional<Tensor> bias,
                                      int64_t out_h, int64_t out_w, int64_t sh, int64_t sw, int64_t dh,
                                      int64_t dw, std::vector<int64_t> pads) {
    if (pads.size() != 4) {
      throw_error(ErrorCode::kInvalidArgument, "Conv2DTranspose",
                  "pads must be (top, bottom, left, right), got " + std::to_string(pads.size()) + " values");
    }
    Conv2dTransposeGeometry g;
    g.out_h = out_h;
    g.out_w = out_w;
    g.params.stride_h = sh;
    g.params.stride_w = sw;
    g.params.dilation_h = dh;
    g.params.dilation_w = dw;
    g.params.pad_top = pads[0];
    g.params.pad_bottom = pads[1];
    g.params.pad_left = pads[2];
    g.params.pad_right = pads[3];
    return recorded_op({x, w, or_undefined(bias)}, [=](const std::vector<Tensor>& in) {
      return conv2d_transpose(in[0], in[1], in[2], g);
    });
  }, py::arg("x"), py::arg("w"), py::arg("bias"), py::arg("out_h"), py::arg("out_w"), py::arg("stride_h"),
     py::arg("stride_w"), py::arg("dilation_h"), py::arg("dilation_w"), py::arg("pads"));
  m.def("pool2d", [](const Tensor& x, bool max, int64_t wh, int64_t ww, int64_t sh, int64_t sw,
                     const std::string& padding) {
    const Padding pad = parse_padding(padding, max ? "MaxPool" : "AvgPool");
    return recorded_op({x}, [=](const std::vector<Tensor>& in) {
      return pool2d(in[0], max, wh, ww, sh, sw, pad);
    });
  });
  m.def("softmax", [](const Tensor& x, int64_t axis, bool log) {
    return recorded_op({x}, [=](const std::vector<Tensor>& in) { return softmax(in[0], axis, log); });
  }, py::arg("x"), py::arg("axis") = -1, py::arg("log") = false);
  m.def("dropout", [](const Tensor& x, double rate, bool training) {
    return recorded_op({x}, [=](const std::vector<Tensor>& in) { return dropout(in[0], rate, training); });
  });
  m.def("batch_norm", [](const Tensor& x, const Tensor& gamma, const Tensor& beta,
                         const Tensor& moving_mean, const Tensor& moving_var, double momentum,
                         double epsilon, bool training) {
    return recorded_op({x, gamma, beta, moving_mean, moving_var}, [=](const std::vector<Tensor>& in) {
      return batch_norm(in[0], in[1], in[2], in[3], in[4], momentum, epsilon, training);
    });
  });
  m.def("layer_norm", [](const Tensor& x, const Tensor& gamma, const Tensor& beta, double epsilon) {
    return recorded_op({x, gamma, beta}, [=](const std::vector<Tensor>& in) {
      return layer_norm(in[0], in[1], in[2], epsilon);
    });
  });
  // Keras's LSTM/GRU/SimpleRNN over a whole sequence in one op (ops/rnn.h): [y, h_last] and,
  // for 'lstm', c_last.
  m.def("fused_rnn", [](const std::string& cell, const Tensor& x, const Tensor& h0,
                        std::optional<Tensor> c0, const Tensor& kernel,
                        const Tensor& recurrent_kernel, const Tensor& bias) {
    const RnnCell kind = parse_rnn_cell(cell);
    return recorded_multi_output_op(
        {x, h0, or_undefined(c0), kernel, recurrent_kernel, bias},
        [kind](const std::vector<Tensor>& in) {
          return fused_rnn(kind, in[0], in[1], in[2], in[3], in[4], in[5]);
        });
  }, py::arg("cell"), py::arg("x"), py::arg("h0"), py::arg("c0"), py::arg("kernel"),
     py::arg("recurrent_kernel"), py::arg("bias"));
  m.def("embedding", [](const Tensor& ids, const Tensor& table) {
    return recorded_op({ids, table}, [](const std::vector<Tensor>& in) { return embedding(in[0], in[1]); });
  });
  m.def("segment_sum_rows", [](const Tensor& rows, const Tensor& ids, int64_t num_segments) {
    return recorded_op({rows, ids}, [num_segments](const std::vector<Tensor>& in) {
      return segment_sum_rows(in[0], in[1], num_segments);
    });
  }, py::arg("rows"), py::arg("ids"), py::arg("num_segments"));
  m.def("segment_extreme_rows", [](const Tensor& rows, const Tensor& ids, int64_t num_segments,
                                   bool is_max) {
    return recorded_op({rows, ids}, [num_segments, is_max](const std::vector<Tensor>& in) {
      return segment_extreme_rows(in[0], in[1], num_segments, is_max);
    });
  }, py::arg("rows"), py::arg("ids"), py::arg("num_segments"), py::arg("is_max"));
  m.def("segment_prod_rows", [](const Tensor& rows, const Tensor& ids, int64_t num_segments) {
    return recorded_op({rows, ids}, [num_segments](const std::vector<Tensor>& in) {
      return segment_prod_rows(in[0], in[1], num_segments);
    });
  }, py::arg("rows"), py::arg("ids"), py::arg("num_segments"));
  m.def("scaled_dot_product_attention", [](const Tensor& q, const Tensor& k, const Tensor& v,
                                           std::optional<Tensor> mask) {
    return recorded_op({q, k, v, or_undefined(mask)}, [](const std::vector<Tensor>& in) {
      return scaled_dot_product_attention(in[0], in[1], in[2], in[3]);
    });
  });
  m.def("sparse_softmax_cross_entropy", [](const Tensor& labels, const Tensor& logits) {
    return recorded_op({labels, logits}, [](const std::vector<Tensor>& in) {
      return sparse_softmax_cross_entropy(in[0], in[1]);
    });
  });
  m.def("softmax_cross_entropy", [](const Tensor& labels, const Tensor& logits) {
    return recorded_op({labels, logits}, [](const std::vector<Tensor>& in) {
      return softmax_cross_entropy(in[0], in[1]);
    });
  });
  m.def("mean_squared_error", [](const Tensor& y_true, const Tensor& y_pred) {
    return recorded_op({y_true, y_pred}, [](const std::vector<Tensor>& in) {
      return mean_squared_error(in[0], in[1]);
    });
  });
  m.def("one_hot", [](const Tensor& labels, int64_t n, const std::string& dtype) {
    const DType to = parse_dtype(dtype);
    return recorded_op({labels}, [=](const std::vector<Tensor>& in) { return one_hot(in[0], n, to); });
  });
}

}  // namespace gpuaccel::bindings
