// Protocol units against published vectors: CRC-32 check value, COBS examples
// (Cheshire & Baker / Wikipedia), SHA-256 examples of FIPS 180-2 appendix B,
// and the frame decoder's handling of corrupt, oversized and garbage input.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "engine/model/checked_size.h"
#include "serial/protocol/cobs.h"
#include "serial/protocol/crc32.h"
#include "serial/protocol/frame.h"
#include "serial/protocol/messages.h"
#include "serial/protocol/sha256.h"

namespace gruwb::serial {
namespace {

std::vector<uint8_t> bytes(std::initializer_list<int> v) {
  return std::vector<uint8_t>(v.begin(), v.end());
}

std::string hex_of(const std::string& text) {
  uint8_t digest[32];
  sha256(reinterpret_cast<const uint8_t*>(text.data()), text.size(), digest);
  char out[65];
  sha256_hex(digest, out);
  return out;
}

TEST(Crc32, CheckValue) {
  const char* check = "123456789";
  EXPECT_EQ(crc32(reinterpret_cast<const uint8_t*>(check), 9), 0xCBF43926u);
  EXPECT_EQ(crc32(nullptr, 0), 0u);
  // Incremental equals one shot.
  const uint32_t a = crc32_update(0, reinterpret_cast<const uint8_t*>(check), 4);
  EXPECT_EQ(crc32_update(a, reinterpret_cast<const uint8_t*>(check) + 4, 5), 0xCBF43926u);
}

TEST(Sha256, Fips180Vectors) {
  EXPECT_EQ(hex_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // One million 'a', fed in uneven pieces through the incremental interface.
  Sha256 context;
  const std::string piece(997, 'a');
  size_t left = 1000000;
  while (left > 0) {
    const size_t n = left < piece.size() ? left : piece.size();
    context.update(reinterpret_cast<const uint8_t*>(piece.data()), n);
    left -= n;
  }
  uint8_t digest[32];
  context.finish(digest);
  char out[65];
  sha256_hex(digest, out);
  EXPECT_STREQ(out, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Cobs, WikipediaExamples) {
  struct Case {
    std::vector<uint8_t> raw, encoded;
  } cases[] = {
      {bytes({0x00}), bytes({0x01, 0x01})},
      {bytes({0x00, 0x00}), bytes({0x01, 0x01, 0x01})},
      {bytes({0x00, 0x11, 0x00}), bytes({0x01, 0x02, 0x11, 0x01})},
      {bytes({0x11, 0x22, 0x00, 0x33}), bytes({0x03, 0x11, 0x22, 0x02, 0x33})},
      {bytes({0x11, 0x22, 0x33, 0x44}), bytes({0x05, 0x11, 0x22, 0x33, 0x44})},
      {bytes({0x11, 0x00, 0x00, 0x00}), bytes({0x02, 0x11, 0x01, 0x01, 0x01})},
  };
  for (const Case& c : cases) {
    uint8_t out[16];
    const size_t n = cobs_encode(c.raw.data(), c.raw.size(), out, sizeof out);
    EXPECT_EQ(std::vector<uint8_t>(out, out + n), c.encoded);
    uint8_t back[16];
    const long m = cobs_decode(c.encoded.data(), c.encoded.size(), back, sizeof back);
    ASSERT_EQ(m, static_cast<long>(c.raw.size()));
    EXPECT_EQ(std::vector<uint8_t>(back, back + m), c.raw);
  }
}

TEST(Cobs, LongRunsRoundTrip) {
  // 254-byte blocks are the special case (code 0xFF, no implied zero).
  for (size_t size : {253u, 254u, 255u, 508u, 1000u}) {
    std::vector<uint8_t> raw(size);
    for (size_t i = 0; i < size; ++i)
      raw[i] = static_cast<uint8_t>(i % 7 == 3 && size == 1000 ? 0 : 1 + i % 250);
    std::vector<uint8_t> enc(cobs_max_encoded_size(size));
    const size_t n = cobs_encode(raw.data(), raw.size(), enc.data(), enc.size());
    ASSERT_GT(n, 0u);
    for (size_t i = 0; i < n; ++i) ASSERT_NE(enc[i], 0) << "size " << size << " byte " << i;
    std::vector<uint8_t> back(size);
    ASSERT_EQ(cobs_decode(enc.data(), n, back.data(), back.size()), static_cast<long>(size));
    EXPECT_EQ(back, raw);
  }
  const auto bad = bytes({0x05, 0x11, 0x22});  // code promises 4 bytes, 2 follow
  uint8_t out[8];
  EXPECT_EQ(cobs_decode(bad.data(), bad.size(), out, sizeof out), -1);
}

std::vector<uint8_t> wire(uint8_t type, uint16_t seq, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> out(kMaxWireFrame);
  const size_t n = encode_frame(type, seq, payload.data(), payload.size(), out.data(), out.size());
  out.resize(n);
  return out;
}

TEST(Frame, RoundTripAndRejections) {
  FrameDecoder decoder;
  std::vector<uint8_t> payload(300);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i);
  std::vector<uint8_t> stream = {0x13, 0x37, 0x42};  // garbage before the first delimiter
  stream.push_back(0);
  const auto good = wire(0x04, 0xBEEF, payload);
  auto corrupt = good;
  corrupt[10] ^= 0x20;  // one flipped bit: CRC catches it
  stream.insert(stream.end(), corrupt.begin(), corrupt.end());
  stream.insert(stream.end(), good.begin(), good.end());
  std::vector<uint8_t> oversized(kMaxWireFrame + 10, 0x55);
  oversized.push_back(0);
  stream.insert(stream.end(), oversized.begin(), oversized.end());
  stream.insert(stream.end(), good.begin(), good.end());

  int frames = 0;
  for (uint8_t b : stream) {
    if (!decoder.push(b)) continue;
    ++frames;
    const Frame& f = decoder.frame();
    EXPECT_EQ(f.type, 0x04);
    EXPECT_EQ(f.sequence, 0xBEEF);
    ASSERT_EQ(f.length, payload.size());
    EXPECT_EQ(memcmp(f.payload, payload.data(), payload.size()), 0);
  }
  EXPECT_EQ(frames, 2);
  EXPECT_EQ(decoder.stats().crc_errors, 1u);
  EXPECT_EQ(decoder.stats().oversized, 1u);
  EXPECT_EQ(decoder.stats().malformed, 1u);  // the 3 garbage bytes
  EXPECT_EQ(decoder.stats().frames, 2u);

  // Too large to send at all.
  std::vector<uint8_t> huge(kMaxPayload + 1);
  uint8_t out[kMaxWireFrame + 16];
  EXPECT_EQ(encode_frame(1, 1, huge.data(), huge.size(), out, sizeof out), 0u);
}

TEST(Messages, SettingsRoundTripAndTruncation) {
  TrainingSettings s;
  s.config.optimizer = Optimizer::kSgd;
  s.config.learning_rate = 0.0125f;
  s.config.momentum = 0.9f;
  s.config.batch_size = 8;
  s.config.scope = TrainableScope::kLastN;
  s.config.last_n = 2;
  s.epochs = 3;
  s.seed = 77;
  s.metric_every = 5;
  s.config.loss_output = 1;
  uint8_t buffer[128];
  WireWriter w(buffer, sizeof buffer);
  s.write(w);
  ASSERT_TRUE(w.ok);
  TrainingSettings back;
  WireReader r(buffer, w.size());
  ASSERT_TRUE(back.read(r));
  EXPECT_EQ(back.config.optimizer, Optimizer::kSgd);
  EXPECT_FLOAT_EQ(back.config.learning_rate, 0.0125f);
  EXPECT_EQ(back.config.batch_size, 8);
  EXPECT_EQ(back.config.scope, TrainableScope::kLastN);
  EXPECT_EQ(back.epochs, 3u);
  EXPECT_EQ(back.seed, 77u);
  EXPECT_EQ(back.config.loss_output, 1);
  // The loss output is the optional last field: a version-1 payload without
  // it (an older host) reads as "the board chooses".
  const size_t without_loss_output = w.size() - 4;
  WireReader older(buffer, without_loss_output);
  TrainingSettings old_host;
  ASSERT_TRUE(old_host.read(older));
  EXPECT_EQ(old_host.config.loss_output, -1);
  EXPECT_EQ(old_host.seed, 77u);
  // Every other truncation is rejected, never read past the end.
  for (size_t n = 0; n < w.size(); ++n) {
    if (n == without_loss_output) continue;
    WireReader shorter(buffer, n);
    TrainingSettings t;
    EXPECT_FALSE(t.read(shorter)) << n;
  }
  // Below -1 is no output.
  s.config.loss_output = -2;
  WireWriter bad(buffer, sizeof buffer);
  s.write(bad);
  WireReader bad_reader(buffer, bad.size());
  EXPECT_FALSE(back.read(bad_reader));
}

TEST(Messages, BenchRoundTripAndBrokenPayloads) {
  BenchRequest request;
  request.runs = 250;
  request.seed = 0xDEADBEEF;
  uint8_t buffer[kMaxPayload];
  WireWriter w(buffer, sizeof buffer);
  request.write(w);
  ASSERT_TRUE(w.ok);
  EXPECT_EQ(w.size(), 8u);  // runs:u32, seed:u32 (docs/serial-protocol.md)
  BenchRequest back;
  WireReader r(buffer, w.size());
  ASSERT_TRUE(back.read(r));
  EXPECT_EQ(back.runs, 250u);
  EXPECT_EQ(back.seed, 0xDEADBEEFu);
  for (size_t n = 0; n < w.size(); ++n) {
    WireReader shorter(buffer, n);
    BenchRequest t;
    EXPECT_FALSE(t.read(shorter)) << n;
  }
  // Runs outside 1..kMaxBenchRuns are refused.
  for (uint32_t runs : {0u, kMaxBenchRuns + 1, 0xFFFFFFFFu}) {
    BenchRequest bad;
    bad.runs = runs;
    WireWriter bw(buffer, sizeof buffer);
    bad.write(bw);
    WireReader br(buffer, bw.size());
    BenchRequest t;
    EXPECT_FALSE(t.read(br)) << runs;
  }

  BenchReply reply;
  reply.runs = 100;
  reply.clock_hz = 25000000;
  reply.arena_bytes = 10176;
  reply.total_cycles = 0x123456789ull;  // over 32 bits
  reply.min_cycles = 4000;
  reply.median_cycles = 4100;
  reply.max_cycles = 5000;
  reply.output_type = 0;
  reply.output_bytes = 16;
  reply.output_crc32 = 0xCBF43926;
  reply.output_count = 16;
  for (int i = 0; i < 16; ++i) reply.output[i] = static_cast<uint8_t>(i * 7 + 1);
  WireWriter rw(buffer, sizeof buffer);
  reply.write(rw);
  ASSERT_TRUE(rw.ok);
  EXPECT_EQ(rw.size(), 42u + 16u);
  BenchReply got;
  WireReader rr(buffer, rw.size());
  ASSERT_TRUE(got.read(rr));
  EXPECT_EQ(got.runs, 100u);
  EXPECT_EQ(got.clock_hz, 25000000u);
  EXPECT_EQ(got.arena_bytes, 10176u);
  EXPECT_EQ(got.total_cycles, 0x123456789ull);
  EXPECT_EQ(got.min_cycles, 4000u);
  EXPECT_EQ(got.median_cycles, 4100u);
  EXPECT_EQ(got.max_cycles, 5000u);
  EXPECT_EQ(got.output_bytes, 16u);
  EXPECT_EQ(got.output_crc32, 0xCBF43926u);
  ASSERT_EQ(got.output_count, 16);
  EXPECT_EQ(memcmp(got.output, reply.output, 16), 0);
  for (size_t n = 0; n < rw.size(); ++n) {
    WireReader shorter(buffer, n);
    BenchReply t;
    EXPECT_FALSE(t.read(shorter)) << n;
  }
  // More output bytes announced than the output has, or than a reply
  // carries, and a median outside [min, max] are no reply.
  BenchReply odd = reply;
  odd.output_bytes = 8;
  WireWriter ow(buffer, sizeof buffer);
  odd.write(ow);
  WireReader orr(buffer, ow.size());
  EXPECT_FALSE(got.read(orr));
  buffer[41] = static_cast<uint8_t>(kBenchOutputBytes + 1);  // the count byte
  WireReader big(buffer, sizeof buffer);
  EXPECT_FALSE(got.read(big));
  odd = reply;
  odd.median_cycles = 6000;
  WireWriter mw(buffer, sizeof buffer);
  odd.write(mw);
  WireReader mr(buffer, mw.size());
  EXPECT_FALSE(got.read(mr));
  EXPECT_STREQ(message_type_name(0x0B), "BENCH");
  EXPECT_STREQ(message_type_name(0x8B), "BENCH_REPLY");
}

// Size arithmetic on the board, where size_t is 32 bits: sums and products that would wrap are
// refused (the host's 64-bit size_t shows it at SIZE_MAX).
TEST(CheckedSizes, RefuseWhatWouldWrap) {
  size_t out = 0;
  EXPECT_TRUE(checked_add(SIZE_MAX - 5, 5, &out));
  EXPECT_EQ(out, SIZE_MAX);
  EXPECT_FALSE(checked_add(SIZE_MAX - 5, 6, &out));
  EXPECT_TRUE(checked_mul(SIZE_MAX / 3, 3, &out));
  EXPECT_FALSE(checked_mul(SIZE_MAX / 2 + 1, 2, &out));
  EXPECT_TRUE(checked_mul(0, SIZE_MAX, &out));
  EXPECT_EQ(out, 0u);
  EXPECT_TRUE(checked_align_up(17, 16, &out));
  EXPECT_EQ(out, 32u);
  EXPECT_FALSE(checked_align_up(SIZE_MAX - 3, 16, &out));
}

std::vector<uint8_t> dataset_header(uint32_t samples, uint32_t elements, uint32_t classes) {
  std::vector<uint8_t> blob(kDatasetHeaderBytes);
  WireWriter w(blob.data(), blob.size());
  for (uint32_t v : {kDatasetMagic, 1u, samples, elements, classes}) w.u32(v);
  return blob;
}

// A GWDS header whose samples x sample bytes is 2^50: on a 32-bit board the product wrapped to 0,
// so a bare 20-byte header passed as "2^24 samples" and training read far past the blob.
TEST(CheckedSizes, DatasetHeaderWhoseSizeWrapsOn32Bits) {
  DatasetHeader header;
  std::vector<uint8_t> blob = dataset_header(1u << 24, (1u << 24) - 1, 4);
  EXPECT_FALSE(read_dataset_header(blob.data(), blob.size(), &header));
  blob = dataset_header(1u << 24, (1u << 24) + 1, 4);  // past the per-sample bound
  EXPECT_FALSE(read_dataset_header(blob.data(), blob.size(), &header));
  // The honest one: 2 samples of 3 values and a class.
  blob = dataset_header(2, 3, 4);
  blob.resize(blob.size() + 2 * 4 * 4);
  ASSERT_TRUE(read_dataset_header(blob.data(), blob.size(), &header));
  EXPECT_EQ(header.sample_count, 2u);
  blob.pop_back();
  EXPECT_FALSE(read_dataset_header(blob.data(), blob.size(), &header));
}

}  // namespace
}  // namespace gruwb::serial
