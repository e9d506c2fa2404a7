// The DAP Content-Length codec: every malformed input ends in a FramingError, never an exception,
// never a hang, and well-formed input survives any fragmentation.
#include "protocol/framing.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>

namespace dapprof::protocol {
namespace {

// Drains the decoder: the messages decoded, and the error that ended decoding, if any.
struct Drained {
  std::vector<Json> messages;
  std::optional<std::string> error;
};

Drained drain(FrameDecoder& decoder) {
  Drained out;
  for (;;) {
    DecodeStep step = decoder.next();
    if (std::holds_alternative<NeedMore>(step)) return out;
    if (auto* error = std::get_if<FramingError>(&step)) {
      out.error = error->message;
      return out;
    }
    out.messages.push_back(std::get<Json>(std::move(step)));
  }
}

Drained decode_all(std::string_view bytes, std::size_t limit = kDefaultMaxBodyBytes) {
  FrameDecoder decoder(limit);
  decoder.feed(bytes);
  return drain(decoder);
}

std::string frame(std::string_view body) {
  return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

Json request(int seq) {
  return {{"seq", seq},
          {"type", "request"},
          {"command", "startProfiling"},
          {"arguments", {{"rate", 100}}}};
}

TEST(Framing, EncodesHeaderAndBodyInOneBuffer) {
  const Json message = request(1);
  const std::string body = dump_json(message);
  EXPECT_EQ(encode_frame(message),
            "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
}

TEST(Framing, ByteByByteFragmentsDecodeToTheSameMessages) {
  const std::string stream = encode_frame(request(1)) + encode_frame(request(2));
  FrameDecoder decoder;
  std::vector<Json> messages;
  for (char c : stream) {
    decoder.feed(std::string_view(&c, 1));
    auto drained = drain(decoder);
    ASSERT_FALSE(drained.error) << *drained.error;
    for (auto& m : drained.messages) messages.push_back(std::move(m));
  }
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0], request(1));
  EXPECT_EQ(messages[1], request(2));
  EXPECT_EQ(decoder.buffered(), 0u);
}

TEST(Framing, CoalescedFramesAllDecodeInOrder) {
  std::string stream;
  for (int i = 0; i < 1000; ++i) stream += encode_frame(request(i));
  const auto drained = decode_all(stream);
  ASSERT_FALSE(drained.error);
  ASSERT_EQ(drained.messages.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(drained.messages[i]["seq"], i);
}

// Regression: the decoder compacts its buffer as it goes; messages of varying sizes read across
// compactions must come out intact (a body once pointed into the compacted buffer).
TEST(Framing, MessagesSurviveBufferCompaction) {
  std::string stream;
  for (int i = 0; i < 300; ++i) {
    Json message = request(i);
    message["arguments"]["padding"] =
        std::string(static_cast<std::size_t>(i * 37 % 5000), 'a' + i % 26);
    stream += encode_frame(message);
  }
  FrameDecoder decoder;
  std::vector<Json> messages;
  for (std::size_t pos = 0; pos < stream.size(); pos += 4999) {
    decoder.feed(std::string_view(stream).substr(pos, 4999));
    auto drained = drain(decoder);
    ASSERT_FALSE(drained.error) << *drained.error;
    for (auto& m : drained.messages) messages.push_back(std::move(m));
  }
  ASSERT_EQ(messages.size(), 300u);
  for (int i = 0; i < 300; ++i) {
    EXPECT_EQ(messages[i]["seq"], i);
    EXPECT_EQ(messages[i]["arguments"]["padding"].get<std::string>().size(),
              static_cast<std::size_t>(i * 37 % 5000));
  }
}

TEST(Framing, PartialFrameWaitsForMoreBytes) {
  const std::string frame = encode_frame(request(7));
  FrameDecoder decoder;
  decoder.feed(frame.substr(0, frame.size() - 1));
  EXPECT_TRUE(std::holds_alternative<NeedMore>(decoder.next()));
  EXPECT_EQ(decoder.buffered(), frame.size() - 1);
  decoder.feed(frame.substr(frame.size() - 1));
  auto step = decoder.next();
  ASSERT_TRUE(std::holds_alternative<Json>(step));
  EXPECT_EQ(std::get<Json>(step), request(7));
}

TEST(Framing, BodyOverTheConfiguredLimitIsRefusedBeforeItArrives) {
  // Only the header is fed: the limit is enforced without buffering the body.
  const auto drained = decode_all("Content-Length: 101\r\n\r\n", 100);
  ASSERT_TRUE(drained.error);
  EXPECT_NE(drained.error->find("exceeds the limit of 100 bytes"), std::string::npos)
      << *drained.error;
  const auto at_limit = decode_all("Content-Length: 2\r\n\r\n{}", 2);
  ASSERT_FALSE(at_limit.error);
  EXPECT_EQ(at_limit.messages.size(), 1u);
}

TEST(Framing, MissingContentLengthIsAnError) {
  const auto drained = decode_all("Content-Type: application/json\r\n\r\n{}");
  ASSERT_TRUE(drained.error);
  EXPECT_NE(drained.error->find("no Content-Length"), std::string::npos);
}

TEST(Framing, NonNumericOrNegativeContentLengthIsAnError) {
  for (const char* value : {"abc", "-5", "12abc", "", "1.5", "99999999999999999999999"}) {
    const auto drained = decode_all(std::string("Content-Length: ") + value + "\r\n\r\n{}");
    ASSERT_TRUE(drained.error) << value;
    EXPECT_TRUE(drained.messages.empty()) << value;
  }
}

TEST(Framing, NonJsonAndNonObjectBodiesAreErrors) {
  for (const char* body : {"{not json", "\xff\xfe{}", "{\"a\":1}}"}) {
    const auto drained = decode_all(frame(body));
    ASSERT_TRUE(drained.error) << body;
    EXPECT_NE(drained.error->find("not valid JSON"), std::string::npos) << *drained.error;
  }
  for (const char* body : {"[1,2]", "42", "\"text\"", "null"}) {
    const auto drained = decode_all(frame(body));
    ASSERT_TRUE(drained.error) << body;
    EXPECT_NE(drained.error->find("not a JSON object"), std::string::npos) << *drained.error;
  }
}

TEST(Framing, ErrorIsStickyAndLaterBytesAreNotDecoded) {
  FrameDecoder decoder;
  decoder.feed("Content-Length: x\r\n\r\n");
  ASSERT_TRUE(std::holds_alternative<FramingError>(decoder.next()));
  decoder.feed(encode_frame(request(1)));
  EXPECT_TRUE(std::holds_alternative<FramingError>(decoder.next()));
}

TEST(Framing, UnicodeSurvivesBothDirections) {
  const Json message = {{"seq", 1},
                        {"type", "event"},
                        {"event", "output"},
                        {"body", {{"output", "café 函数 🐍 ключ"}}}};
  const std::string encoded = encode_frame(message);
  // Content-Length counts bytes, not characters.
  const std::string body = dump_json(message);
  EXPECT_NE(encoded.find("Content-Length: " + std::to_string(body.size()) + "\r\n"),
            std::string::npos);
  EXPECT_NE(body.find("函数"), std::string::npos);  // sent as UTF-8, not \u escapes
  const auto drained = decode_all(encoded);
  ASSERT_FALSE(drained.error);
  ASSERT_EQ(drained.messages.size(), 1u);
  EXPECT_EQ(drained.messages[0]["body"]["output"], "café 函数 🐍 ключ");
  // \u escapes from the peer, including a surrogate pair, decode to the same UTF-8.
  const auto escaped = decode_all(frame(R"({"s":"caf\u00e9\ud83d\udc0d"})"));
  ASSERT_FALSE(escaped.error) << *escaped.error;
  EXPECT_EQ(escaped.messages.at(0)["s"], "café🐍");
}

TEST(Framing, InvalidUtf8InAStringIsReplacedNotThrown) {
  const Json message = {{"file", std::string("/tmp/bad\xff\xfe.py")}};
  std::string encoded;
  ASSERT_NO_THROW(encoded = encode_frame(message));
  const auto drained = decode_all(encoded);
  ASSERT_FALSE(drained.error) << *drained.error;
  EXPECT_EQ(drained.messages.at(0)["file"], "/tmp/bad\xEF\xBF\xBD\xEF\xBF\xBD.py");  // U+FFFD twice
}

TEST(Framing, ExtraHeadersAreIgnoredInAnyCase) {
  const auto drained =
      decode_all("X-Custom: 1\r\ncontent-length: 2\r\nContent-Type: application/json\r\n\r\n{}");
  ASSERT_FALSE(drained.error) << *drained.error;
  EXPECT_EQ(drained.messages.size(), 1u);
}

TEST(Framing, HeaderWithoutBlankLineIsRefusedNotBufferedForever) {
  FrameDecoder decoder;
  decoder.feed("Content-Length: 2\r\n");
  EXPECT_TRUE(std::holds_alternative<NeedMore>(decoder.next()));
  std::optional<std::string> error;
  for (int i = 0; i < 10000 && !error; ++i) {
    decoder.feed("X-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
    auto drained = drain(decoder);
    error = drained.error;
  }
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("without a blank line"), std::string::npos) << *error;
}

TEST(Framing, ConflictingContentLengthsAreAnError) {
  const auto drained = decode_all("Content-Length: 2\r\nContent-Length: 3\r\n\r\n{} ");
  ASSERT_TRUE(drained.error);
  EXPECT_NE(drained.error->find("conflicting"), std::string::npos);
  const auto repeated = decode_all("Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}");
  EXPECT_FALSE(repeated.error);
  EXPECT_EQ(repeated.messages.size(), 1u);
}

TEST(Framing, HeaderLineWithoutColonIsAnError) {
  const auto drained = decode_all("Content-Length 2\r\n\r\n{}");
  ASSERT_TRUE(drained.error);
  EXPECT_NE(drained.error->find("malformed"), std::string::npos);
}

}  // namespace
}  // namespace dapprof::protocol
