#pragma once
// The GWDS blob the board trains on (messages.h, docs/serial-protocol.md).
// Host-only. The samples come prepared: the app's dataset layer reads the
// file, resamples, normalises and splits it as for the desktop's training
// (app/core/board.h board_dataset_blob); this only packs them for the wire.

#include <cstdint>
#include <string>
#include <vector>

namespace gruwb::serial {

// Packs `labels.size()` samples of `input_elements` floats each (the model
// input's layout: [T, F] time-major), in their order, with class ids below
// `classes`. False with *error naming the problem (sizes that do not fit the
// blob's limits, a label out of range).
bool make_dataset_blob(const std::vector<float>& inputs, const std::vector<int>& labels,
                       uint32_t input_elements, uint32_t classes, std::vector<uint8_t>* blob,
                       std::string* error);

}  // namespace gruwb::serial
