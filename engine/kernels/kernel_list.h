// Every kernel the engine has: X(NAME, registration). NAME is the op's schema
// name (a builtin) or its custom code, the word a firmware build lists in
// GRUWB_FW_OPS; engine/CMakeLists.txt reads this list to generate a build's
// default op table (engine/runtime/op_resolver.h). Adding an op touches its
// kernel file, this list and its test.
//
// The cell plugins' kernels (plugins/cells/<cell>/, each folder's kernel.cmake)
// come last, from a list engine/cell_kernels.cmake generates: adding a cell
// plugin touches only its folder and its tests.

#pragma once

#if __has_include("engine/kernels/cell_kernel_list.h")
#include "engine/kernels/cell_kernel_list.h"
#else  // a build outside CMake: no cell plugins
#define GRUWB_CELL_KERNELS(X)
#endif

#define GRUWB_ALL_KERNELS(X)                                         \
  X(ADD, kAddKernel)                                                 \
  X(SUB, kSubKernel)                                                 \
  X(MUL, kMulKernel)                                                 \
  X(MINIMUM, kMinimumKernel)                                         \
  X(MAXIMUM, kMaximumKernel)                                         \
  X(LESS, kLessKernel)                                               \
  X(LESS_EQUAL, kLessEqualKernel)                                    \
  X(GREATER, kGreaterKernel)                                         \
  X(GREATER_EQUAL, kGreaterEqualKernel)                              \
  X(EQUAL, kEqualKernel)                                             \
  X(NOT_EQUAL, kNotEqualKernel)                                      \
  X(LOGISTIC, kLogisticKernel)                                       \
  X(TANH, kTanhKernel)                                               \
  X(RELU, kReluKernel)                                               \
  X(RELU6, kRelu6Kernel)                                             \
  X(FULLY_CONNECTED, kFullyConnectedKernel)                          \
  X(SOFTMAX, kSoftmaxKernel)                                         \
  X(RESHAPE, kReshapeKernel)                                         \
  X(EXPAND_DIMS, kExpandDimsKernel)                                  \
  X(SQUEEZE, kSqueezeKernel)                                         \
  X(WHILE, kWhileKernel)                                             \
  X(IF, kIfKernel)                                                   \
  X(CALL_ONCE, kCallOnceKernel)                                      \
  X(VAR_HANDLE, kVarHandleKernel)                                    \
  X(ASSIGN_VARIABLE, kAssignVariableKernel)                          \
  X(READ_VARIABLE, kReadVariableKernel)                              \
  X(GATHER, kGatherKernel)                                           \
  X(STRIDED_SLICE, kStridedSliceKernel)                              \
  X(SLICE, kSliceKernel)                                             \
  X(CONCATENATION, kConcatenationKernel)                             \
  X(SPLIT, kSplitKernel)                                             \
  X(SPLIT_V, kSplitVKernel)                                          \
  X(PACK, kPackKernel)                                               \
  X(UNPACK, kUnpackKernel)                                           \
  X(TRANSPOSE, kTransposeKernel)                                     \
  X(SHAPE, kShapeKernel)                                             \
  X(FILL, kFillKernel)                                               \
  X(CAST, kCastKernel)                                               \
  X(UNIDIRECTIONAL_SEQUENCE_LSTM, kUnidirectionalSequenceLstmKernel) \
  X(UNIDIRECTIONAL_SEQUENCE_RNN, kUnidirectionalSequenceRnnKernel)   \
  X(GRU, kGruKernel)                                                 \
  X(GRUWB_GRU, kGruCustomKernel)                                     \
  X(FlexTensorListReserve, kFlexTensorListReserveKernel)             \
  X(FlexTensorListFromTensor, kFlexTensorListFromTensorKernel)       \
  X(FlexTensorListStack, kFlexTensorListStackKernel)                 \
  X(FlexTensorListGetItem, kFlexTensorListGetItemKernel)             \
  X(FlexTensorListSetItem, kFlexTensorListSetItemKernel)             \
  /* issue 14: ops the converters' models use */                     \
  X(LOGICAL_AND, kLogicalAndKernel)                                  \
  X(LOGICAL_OR, kLogicalOrKernel)                                    \
  X(LOGICAL_NOT, kLogicalNotKernel)                                  \
  X(SELECT, kSelectKernel)                                           \
  X(SELECT_V2, kSelectV2Kernel)                                      \
  X(RANK, kRankKernel)                                               \
  X(RANGE, kRangeKernel)                                             \
  X(REVERSE_V2, kReverseV2Kernel)                                    \
  X(ZEROS_LIKE, kZerosLikeKernel)                                    \
  X(ELU, kEluKernel)                                                 \
  X(LEAKY_RELU, kLeakyReluKernel)                                    \
  X(RELU_N1_TO_1, kReluN1To1Kernel)                                  \
  X(RELU_0_TO_1, kRelu0To1Kernel)                                    \
  X(DIV, kDivKernel)                                                 \
  X(FLOOR_DIV, kFloorDivKernel)                                      \
  X(FLOOR_MOD, kFloorModKernel)                                      \
  X(SQUARED_DIFFERENCE, kSquaredDifferenceKernel)                    \
  X(EXP, kExpKernel)                                                 \
  X(NEG, kNegKernel)                                                 \
  X(ABS, kAbsKernel)                                                 \
  X(SQRT, kSqrtKernel)                                               \
  X(RSQRT, kRsqrtKernel)                                             \
  X(SQUARE, kSquareKernel)                                           \
  X(SUM, kSumKernel)                                                 \
  X(MEAN, kMeanKernel)                                               \
  X(TILE, kTileKernel)                                               \
  X(ARG_MAX, kArgMaxKernel)                                          \
  X(ARG_MIN, kArgMinKernel)                                          \
  X(BATCH_MATMUL, kBatchMatmulKernel)                                \
  X(CONV_2D, kConv2dKernel)                                          \
  X(DEPTHWISE_CONV_2D, kDepthwiseConv2dKernel)                       \
  X(MAX_POOL_2D, kMaxPool2dKernel)                                   \
  X(AVERAGE_POOL_2D, kAveragePool2dKernel)                           \
  /* issue 15: full-integer models */                                \
  X(QUANTIZE, kQuantizeKernel)                                       \
  X(DEQUANTIZE, kDequantizeKernel)                                   \
  X(SVDF, kSvdfKernel)                                               \
  /* cell plugins (engine/cell_kernels.cmake) */                     \
  GRUWB_CELL_KERNELS(X)
