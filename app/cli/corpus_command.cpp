// gruwb corpus DIR [--golden DIR] [--json]

#include "app/cli/command.h"
#include "app/core/corpus.h"
#include "app/core/inspect.h"

namespace gruwb::cli {
namespace {

int run(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  int exit_code = 0;
  if (!parse_args(kCorpusCommand, args, {{"--golden", true}, {"--json", false}}, &parsed,
                  &exit_code)) {
    return exit_code;
  }
  if (parsed.positional.size() != 1) {
    return usage_error(
        parsed.positional.empty() ? "corpus: missing DIR" : "corpus: one DIR expected",
        &kCorpusCommand);
  }
  app::CorpusRequest request;
  request.folder = parsed.positional[0];
  request.golden_folder = parsed.value("--golden");
  request.json = parsed.has("--json");
  std::string out, err;
  return finish(app::run_corpus(request, &out, &err), out, err);
}

}  // namespace

const Command kCorpusCommand = {
    "corpus", "Try every model of a folder: runs, equals golden, fuses, trains",
    "Usage: gruwb corpus DIR [--golden DIR] [--json]\n"
    "\n"
    "Runs every .tflite/.circle file in DIR through what a new user tries first and\n"
    "prints one line per model:\n"
    "  runs          the engine prepares it (else the reason, on the next line)\n"
    "  golden        equal / differs by X: the outputs for GOLDEN/<stem>/input<i>.npy\n"
    "                against GOLDEN/<stem>/output<i>.npy (float within 1e-5 of\n"
    "                max(1,|ref|), integers within one step); GOLDEN is DIR/golden\n"
    "  fused a/b     recurrent cells `gruwb fuse` rewrites, of those it finds, and\n"
    "                the file bytes before -> after (why a cell stays, next line)\n"
    "  trains        one MSE step on the loss output gives finite gradients\n"
    "A summary line follows. Nothing is written.\n"
    "\n"
    "Options:\n"
    "  --golden DIR  Where the golden folders are (default DIR/golden)\n"
    "  --json        One JSON object with a row per model\n"
    "  -h, --help    Show this help\n"
    "\n"
    "Example:\n"
    "  gruwb corpus ../shared/data/models/real\n",
    run};

}  // namespace gruwb::cli
