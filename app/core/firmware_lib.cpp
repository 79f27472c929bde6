#include "app/core/firmware_lib.h"

#include <QDirIterator>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "app/core/inspect.h"
#include "app/core/training_session.h"
#include "engine/tools/analyzer.h"
#include "engine/tools/arena_buffer.h"
#include "engine/tools/arena_figures.h"
#include "engine/tools/exporter.h"
#include "engine/tools/model_runner.h"
#include "engine/tools/npy.h"
#include "serial/firmware/inference_bench.h"
#include "serial/link/host_reference.h"

namespace gruwb::app {
namespace {

namespace fs = std::filesystem;

// Files by their path in the folder (= in the repository; flatbuffers under third_party/).
using Tree = std::map<std::string, std::string>;

constexpr const char* kResourceRoot = ":/firmware-lib/";
const std::string kTemplates = "app/core/firmware_lib/";
// The example's inputs: serial::fill_bench_inputs with this seed, the values BENCH uses.
constexpr uint32_t kExampleSeed = 1;

Tree embedded_files() {
  Tree tree;
  const QString root = kResourceRoot;
  QDirIterator it(root, QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QString path = it.next();
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) continue;
    const QByteArray bytes = file.readAll();
    tree[path.mid(root.size()).toStdString()] = std::string(bytes.constData(), bytes.size());
  }
  return tree;
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

// Without `# comments` (CMake files) so examples in comments are not read as calls.
std::string without_comments(const std::string& text) {
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) out += line.substr(0, line.find('#')) + "\n";
  return out;
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// The file an #include names, if the tree has it: flatbuffers' headers live in third_party/, the
// library's own files (the folder's root) in kTemplates.
std::string resolve_include(const Tree& tree, const std::string& name) {
  for (const std::string& path : {name, "third_party/" + name, kTemplates + name}) {
    if (tree.count(path)) return path;
  }
  return "";
}

// `path` and every header of the tree it includes, transitively.
void add_with_includes(const Tree& tree, const std::string& path, std::set<std::string>* out) {
  if (!out->insert(path).second) return;
  static const std::regex include_line(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  std::istringstream lines(tree.at(path));
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, include_line)) continue;
    const std::string header = resolve_include(tree, m[1]);
    if (!header.empty()) add_with_includes(tree, header, out);
  }
}

// A board of serial/firmware/boards/<board>/CMakeLists.txt (its gruwb_add_firmware call).
struct Board {
  std::string name, cpu, flash_origin, flash_kb, ram_origin, ram_kb, stack;
  std::string qemu_machine;  // "" when QEMU has none
};

std::vector<Board> boards(const Tree& tree) {
  std::vector<Board> out;
  static const std::regex path_pattern(R"(^serial/firmware/boards/([a-z0-9_]+)/CMakeLists\.txt$)");
  static const std::regex call(R"(gruwb_add_firmware\(([^)]*)\))");
  for (const auto& [path, text] : tree) {
    std::smatch p, c;
    if (!std::regex_match(path, p, path_pattern)) continue;
    const std::string code = without_comments(text);
    if (!std::regex_search(code, c, call)) continue;
    Board b;
    b.name = p[1];
    const std::vector<std::string> w = words(c[1]);
    for (size_t i = 0; i < w.size(); ++i) {
      const auto next = [&](size_t k) { return i + k < w.size() ? w[i + k] : std::string(); };
      if (w[i] == "CPU") b.cpu = next(1);
      if (w[i] == "FLASH") b.flash_origin = next(1), b.flash_kb = next(2);
      if (w[i] == "RAM") b.ram_origin = next(1), b.ram_kb = next(2);
      if (w[i] == "STACK") b.stack = next(1);
      if (w[i] == "-M") b.qemu_machine = next(1);
    }
    if (!b.cpu.empty() && !b.flash_kb.empty() && !b.ram_kb.empty() && !b.stack.empty())
      out.push_back(b);
  }
  return out;
}

// GRUWB_MCU_FLAGS of engine/<cpu>.cmake.
std::string mcu_flags(const Tree& tree, const std::string& cpu) {
  const auto it = tree.find("engine/" + cpu + ".cmake");
  static const std::regex flags(R"(set\(GRUWB_MCU_FLAGS \"([^\"]*)\"\))");
  std::smatch m;
  if (it == tree.end() || !std::regex_search(it->second, m, flags)) return "";
  return m[1];
}

// The engine's kernel list (kernel_list.h and the cell plugins'): op name -> registration.
std::map<std::string, std::string> kernel_symbols(const Tree& tree) {
  std::map<std::string, std::string> out;
  static const std::regex entry(R"(X\(([A-Za-z0-9_]+), *(k[A-Za-z0-9]+)\))");
  for (const char* list : {"engine/kernels/kernel_list.h", "engine/kernels/cell_kernel_list.h"}) {
    const auto it = tree.find(list);
    if (it == tree.end()) continue;
    for (std::sregex_iterator m(it->second.begin(), it->second.end(), entry), end; m != end; ++m)
      out[(*m)[1]] = (*m)[2];
  }
  return out;
}

// The library's sources: the model reader and runtime, the kernels of `ops` and the helpers the
// kernels share (a kernel file of another op is left out; so is registry.cpp, the table of every
// kernel), the trainer when training, a cell plugin's sources (its kernel.cmake) when its op is
// used. Fails naming an op whose kernel is not found.
bool library_sources(const Tree& tree, const std::vector<std::string>& ops, bool training,
                     std::vector<std::string>* out, std::string* error) {
  static const std::regex registration(R"(KernelRegistration\s+(k[A-Za-z0-9]+)\s*=)");
  static const std::regex cell_call(R"(gruwb_cell_kernel\(([^)]*)\))");
  std::map<std::string, std::string> defined_in;            // registration -> file
  std::map<std::string, std::vector<std::string>> cell_op;  // op -> its plugin's sources
  std::set<std::string> kernel_files, cell_files;
  for (const auto& [path, text] : tree) {
    if (starts_with(path, "plugins/cells/") && fs::path(path).filename() == "kernel.cmake") {
      std::smatch m;
      const std::string code = without_comments(text);
      if (!std::regex_search(code, m, cell_call)) continue;
      const std::vector<std::string> w = words(m[1]);
      for (size_t i = 2; i < w.size(); ++i) {
        cell_op[w[0]].push_back(folder_of(path) + "/" + w[i]);
        cell_files.insert(folder_of(path) + "/" + w[i]);
      }
    }
    if (!starts_with(path, "engine/kernels/") || fs::path(path).extension() != ".cpp") continue;
    for (std::sregex_iterator m(text.begin(), text.end(), registration), end; m != end; ++m) {
      defined_in[(*m)[1]] = path;
      kernel_files.insert(path);
    }
  }
  const std::map<std::string, std::string> symbols = kernel_symbols(tree);
  std::set<std::string> chosen;
  for (const auto& [path, text] : tree) {
    const std::string folder = folder_of(path);
    if (fs::path(path).extension() != ".cpp") continue;
    const bool core = folder == "engine/model" || folder == "engine/runtime";
    const bool helper = folder == "engine/kernels" && !kernel_files.count(path) &&
                        path != "engine/kernels/registry.cpp";
    if (core || helper || (training && folder == "engine/train")) chosen.insert(path);
  }
  for (const std::string& op : ops) {
    if (cell_op.count(op)) {
      chosen.insert(cell_op[op].begin(), cell_op[op].end());
      continue;
    }
    const auto symbol = symbols.find(op);
    const auto file = symbol == symbols.end() ? defined_in.end() : defined_in.find(symbol->second);
    if (file == defined_in.end()) {
      *error = "op " + op + ": no kernel source found in this gruwb's engine";
      return false;
    }
    chosen.insert(file->second);
  }
  out->assign(chosen.begin(), chosen.end());
  return true;
}

// `text` as a C array of bytes, 12 per line.
std::string byte_array(const uint8_t* data, size_t size) {
  std::string s;
  char item[8];
  for (size_t i = 0; i < size; ++i) {
    if (i % 12 == 0) s += "\n    ";
    std::snprintf(item, sizeof item, "0x%02x,", data[i]);
    s += item;
  }
  return s;
}

struct HostTensor {
  std::vector<uint8_t> bytes;
  bool float32 = false;
  tools::NpyArray npy;  // inputs: the same values for `gruwb run`
};

// What the example checks: the host's run of the model on the example inputs.
struct Golden {
  std::vector<HostTensor> inputs, outputs;
  size_t arena_bytes = 0;
  // Training: the label, each step's loss, the outputs after the steps.
  std::vector<float> label;
  std::vector<float> losses;
  std::vector<HostTensor> trained_outputs;
};

HostTensor host_tensor(const Tensor* t) {
  HostTensor h;
  h.bytes.assign(t->data, t->data + t->bytes);
  h.float32 = t->type == TensorType::FLOAT32;
  h.npy.dtype = tools::npy_dtype_for(t->type);
  h.npy.shape.assign(t->shape.dims, t->shape.dims + t->shape.rank);
  h.npy.data = h.bytes;
  return h;
}

std::vector<HostTensor> inputs_of(Interpreter& interpreter) {
  serial::fill_bench_inputs(interpreter, kExampleSeed);
  std::vector<HostTensor> out;
  for (int i = 0; i < interpreter.input_count(); ++i)
    out.push_back(host_tensor(interpreter.input(i)));
  return out;
}

std::vector<HostTensor> outputs_of(Interpreter& interpreter) {
  std::vector<HostTensor> out;
  for (int i = 0; i < interpreter.output_count(); ++i)
    out.push_back(host_tensor(interpreter.output(i)));
  return out;
}

// Inference: one run of fresh inputs. Training: batch_size train steps on them with a label of
// class 0 (a one-hot row; the class index for the sparse loss), then an inference.
bool run_golden(const ExportRequest& r, const Model& model, Golden* g, std::string* error) {
  if (r.training_scope.empty()) {
    tools::ModelRunner runner;
    if (!runner.prepare(model, error)) return false;
    g->arena_bytes = runner.arena_bytes();
    g->inputs = inputs_of(runner.interpreter());
    runner.interpreter().reset_variables();
    if (!runner.invoke(error)) return false;
    g->outputs = outputs_of(runner.interpreter());
    return true;
  }
  TrainingConfig config = r.training;
  parse_trainable_scope(r.training_scope.c_str(), &config);
  tools::ArenaBuffer storage;
  Trainer trainer;
  if (!tools::prepare_trainer(model, config, &storage, &trainer, error)) return false;
  g->arena_bytes = trainer.arena_bytes_needed();
  Interpreter& interpreter = trainer.interpreter();
  g->inputs = inputs_of(interpreter);
  Status s = interpreter.invoke();
  g->outputs = outputs_of(interpreter);
  g->label.assign(static_cast<size_t>(trainer.label_count()), 0.f);
  if (config.loss != Loss::kSparseCategoricalCrossEntropy && !g->label.empty()) g->label[0] = 1.f;
  for (int step = 0; s.ok() && step < config.batch_size; ++step) {
    inputs_of(interpreter);
    std::copy(g->label.begin(), g->label.end(), trainer.label());
    float loss = 0.f;
    s = trainer.train_sample(&loss);
    g->losses.push_back(loss);
  }
  if (s.ok()) {
    inputs_of(interpreter);
    s = interpreter.invoke();
  }
  if (!s.ok()) {
    *error = std::string("on the host: ") + s.message();
    return false;
  }
  g->trained_outputs = outputs_of(interpreter);
  return true;
}

std::string tensor_table(const std::string& name, const std::vector<HostTensor>& tensors) {
  std::string s;
  for (size_t i = 0; i < tensors.size(); ++i) {
    s += "static const uint8_t " + name + "_" + std::to_string(i) + "[] = {" +
         byte_array(tensors[i].bytes.data(), tensors[i].bytes.size()) + "\n};\n";
  }
  s += "static const struct ExampleTensor " + name + "s[] = {\n";
  for (size_t i = 0; i < tensors.size(); ++i) {
    s += "    {" + name + "_" + std::to_string(i) + ", sizeof " + name + "_" + std::to_string(i) +
         ", " + (tensors[i].float32 ? "1" : "0") + "},\n";
  }
  return s + "};\n";
}

std::string float_list(const std::vector<float>& values) {
  std::string s;
  char item[32];
  for (size_t i = 0; i < values.size(); ++i) {
    std::snprintf(item, sizeof item, "%s%.9ef,", i % 6 == 0 ? "\n    " : " ", values[i]);
    s += item;
  }
  return s;
}

std::string example_data(const Golden& g) {
  char tolerance[32];
  std::snprintf(tolerance, sizeof tolerance, "%g", serial::kRunTolerance);
  std::string s =
      "/* Generated by gruwb export --to firmware-lib: the example's inputs (as in input_*.npy)\n"
      "   and what the host computed from them. */\n#ifndef GRUWB_EXAMPLE_DATA_H\n"
      "#define GRUWB_EXAMPLE_DATA_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n"
      "/* Relative difference allowed for float32 (board and host libm differ in a last bit). */\n"
      "#define EXAMPLE_TOLERANCE " +
      std::string(tolerance) + "\n#define EXAMPLE_INPUT_COUNT " + std::to_string(g.inputs.size()) +
      "\n#define EXAMPLE_OUTPUT_COUNT " + std::to_string(g.outputs.size()) +
      "\n\nstruct ExampleTensor {\n  const uint8_t* data;\n  size_t bytes;\n  int is_float32;\n};"
      "\n\n" +
      tensor_table("example_input", g.inputs) + tensor_table("example_output", g.outputs);
  if (!g.trained_outputs.empty()) {
    s += "static const float example_label[] = {" + float_list(g.label) + "\n};\n";
    s += "static const float example_losses[] = {" + float_list(g.losses) + "\n};\n";
    s += tensor_table("example_trained_output", g.trained_outputs);
  }
  return s + "\n#endif\n";
}

std::string config_header(const ExportRequest& r, const std::string& model_name,
                          const std::string& array, const Golden& g) {
  const bool training = !r.training_scope.empty();
  std::string s =
      "/* Generated by gruwb export --to firmware-lib from " + model_name +
      ". */\n#ifndef GRUWB_MODEL_CONFIG_H\n#define GRUWB_MODEL_CONFIG_H\n\n"
      "#define GRUWB_MODEL_NAME \"" +
      model_name + "\"\n#define GRUWB_MODEL_ARRAY " + array + "\n#define GRUWB_MODEL_ARRAY_LEN " +
      array +
      "_len\n/* The arena on the exporting host (64-bit): at least what a 32-bit board needs. */\n"
      "#define GRUWB_MODEL_ARENA_BYTES " +
      std::to_string(g.arena_bytes) + "u\n#define GRUWB_MODEL_TRAINING " + (training ? "1" : "0") +
      "\n";
  if (training) {
    char lr[32], momentum[32];
    std::snprintf(lr, sizeof lr, "%.9ef", r.training.learning_rate);
    std::snprintf(momentum, sizeof momentum, "%.9ef", r.training.momentum);
    s += "/* The training (engine/train/training_config.h); edit to taste. */\n"
         "#define GRUWB_MODEL_TRAINABLE_SCOPE \"" +
         r.training_scope + "\" /* fc, all, last:N */\n#define GRUWB_MODEL_OPTIMIZER " +
         std::to_string(static_cast<int>(r.training.optimizer)) + " /* 0 SGD, 1 Adam */\n" +
         "#define GRUWB_MODEL_LOSS " + std::to_string(static_cast<int>(r.training.loss)) + " /* " +
         loss_name(r.training.loss) + ": 0 ce, 1 sparse_ce, 2 mse, 3 mae */\n" +
         "#define GRUWB_MODEL_LEARNING_RATE " + lr + "\n#define GRUWB_MODEL_MOMENTUM " + momentum +
         "\n#define GRUWB_MODEL_BATCH_SIZE " + std::to_string(r.training.batch_size) + "\n";
  }
  return s + "\n#endif\n";
}

// Runs engine/op_table.cmake (as written into the folder) in script mode: the same generator as
// the engine's build, for this model's ops. Its two files land in `tree`.
bool generate_op_table(const Tree& tree, const std::string& ops, Tree* out, std::string* error) {
  const QString cmake = QStandardPaths::findExecutable("cmake");
  if (cmake.isEmpty()) {
    *error =
        "export: --to firmware-lib runs cmake to write the op table (engine/op_table.cmake): "
        "cmake not found (Debian: apt install cmake)";
    return false;
  }
  QTemporaryDir dir;
  if (!dir.isValid()) {
    *error = "export: cannot create a temporary folder for the op table";
    return false;
  }
  const std::string root = dir.path().toStdString() + "/";
  for (const char* name : {"engine/op_table.cmake", "engine/kernels/kernel_list.h",
                           "engine/kernels/cell_kernel_list.h"}) {
    fs::create_directories(fs::path(root + name).parent_path());
    QFile file(QString::fromStdString(root + name));
    const std::string& text = tree.at(name);
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(text.data(), static_cast<qint64>(text.size())) !=
            static_cast<qint64>(text.size())) {
      *error = "export: cannot write " + root + name;
      return false;
    }
  }
  QProcess process;
  process.setProcessChannelMode(QProcess::MergedChannels);
  const std::string lists =
      root + "engine/kernels/kernel_list.h;" + root + "engine/kernels/cell_kernel_list.h";
  process.start(cmake, {QString::fromStdString("-DOPS=" + ops),
                        QString::fromStdString("-DLIST_HEADERS=" + lists),
                        QString::fromStdString("-DOUTPUT=" + root + "op_table.cpp"),
                        QString::fromStdString("-DINTEGER_HEADER=" + root + "integer_forms.h"),
                        "-P", QString::fromStdString(root + "engine/op_table.cmake")});
  const bool done = process.waitForFinished(60000);
  const QString log = QString::fromLocal8Bit(process.readAll()).simplified();
  if (!done || process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
    *error =
        "export: engine/op_table.cmake failed for GRUWB_FW_OPS=" + ops + ": " + log.toStdString();
    return false;
  }
  for (const char* name : {"op_table.cpp", "integer_forms.h"}) {
    QFile file(QString::fromStdString(root + name));
    if (!file.open(QIODevice::ReadOnly)) {
      *error = "export: engine/op_table.cmake wrote no " + std::string(name);
      return false;
    }
    const QByteArray bytes = file.readAll();
    (*out)[std::string("engine/kernels/") + name] = std::string(bytes.constData(), bytes.size());
  }
  return true;
}

// The Makefile's and CMakeLists' board tables and the linker scripts.
struct BoardFiles {
  std::string names, make_boards, make_cpus, cmake_cpus;
};

BoardFiles board_files(const Tree& tree, Tree* out) {
  BoardFiles f;
  std::set<std::string> cpus;
  for (const Board& b : boards(tree)) {
    std::string script = tree.at("serial/firmware/boards/cortex_m/link.ld.in");
    for (const auto& [key, value] :
         std::map<std::string, std::string>{{"@flash_origin@", b.flash_origin},
                                            {"@flash_kb@", b.flash_kb},
                                            {"@ram_origin@", b.ram_origin},
                                            {"@ram_kb@", b.ram_kb},
                                            {"@stack_bytes@", b.stack}}) {
      script = replace_all(script, key, value);
    }
    (*out)["boards/" + b.name + ".ld"] = script;
    f.names += (f.names.empty() ? "" : ", ") + b.name;
    f.make_boards += "CPU_" + b.name + " := " + b.cpu + "\n";
    if (!b.qemu_machine.empty())
      f.make_boards += "QEMU_" + b.name + " := -M " + b.qemu_machine + "\n";
    f.cmake_cpus += "  set(gruwb_board_cpu_" + b.name + " " + b.cpu + ")\n";
    cpus.insert(b.cpu);
  }
  for (const std::string& cpu : cpus) {
    f.make_cpus += "MCU_" + cpu + " := " + mcu_flags(tree, cpu) + "\n";
    for (const std::string& file : {cpu + ".cmake", std::string("cortex-m.cmake")})
      (*out)["cmake/" + file] = tree.at("engine/" + file);
  }
  if (!f.cmake_cpus.empty()) f.cmake_cpus.pop_back();
  return f;
}

std::string render(const std::string& text, const std::map<std::string, std::string>& values) {
  std::string s = text;
  for (const auto& [key, value] : values) s = replace_all(s, "@" + key + "@", value);
  return s;
}

bool write_tree(const std::string& dir, const Tree& files, std::vector<ExportedFile>* written,
                std::string* err) {
  for (const auto& [path, text] : files) {
    const fs::path target = fs::path(dir) / path;
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    if (ec) {
      *err = target.parent_path().string() + ": cannot create the directory: " + ec.message();
      return false;
    }
    if (!tools::write_file_atomically(target.string(),
                                      std::vector<uint8_t>(text.begin(), text.end()), err)) {
      return false;
    }
    written->push_back({target.string(), text.size()});
  }
  return true;
}

}  // namespace

int export_firmware_lib(const ExportRequest& r, const tools::LoadedModel& model,
                        std::vector<ExportedFile>* files, std::vector<std::string>* notes,
                        std::string* err) {
  const std::string model_name = fs::path(r.model_path).filename().string();
  const std::string dir =
      r.output.empty() ? fs::path(r.model_path).stem().string() + "_lib" : r.output;
  if (!r.training_scope.empty()) {
    TrainingConfig probe;
    if (!parse_trainable_scope(r.training_scope.c_str(), &probe)) {
      *err = "export: --training '" + r.training_scope + "' (expected fc, all or last:N)";
      return kExitBadInput;
    }
  }
  // The op list `gruwb inspect` prints: the single rule for what a firmware needs.
  const tools::AnalyzerReport report = tools::analyze_model(model.model, r.model_path);
  if (!report.engine_runs) {
    *err = r.model_path + ": the engine cannot run it: " + report.engine_error;
    return kExitBadInput;
  }
  std::vector<std::string> ops;
  for (std::string op : words(replace_all(report.firmware_ops, ",", " "))) {
    ops.push_back(op.substr(0, op.find(':')));
  }
  Golden golden;
  std::string error;
  if (!run_golden(r, model.model, &golden, &error)) {
    *err = r.model_path + ": " + error;
    return kExitBadInput;
  }

  const Tree tree = embedded_files();
  std::vector<std::string> sources;
  if (!library_sources(tree, ops, !r.training_scope.empty(), &sources, &error)) {
    *err = r.model_path + ": " + error;
    return kExitBadInput;
  }
  Tree out;
  if (!generate_op_table(tree, report.firmware_ops, &out, &error)) {
    *err = error;
    return kExitBadInput;
  }
  std::set<std::string> copied;
  for (const std::string& s : sources) add_with_includes(tree, s, &copied);
  add_with_includes(tree, "serial/firmware/boards/cortex_m/startup.cpp", &copied);
  add_with_includes(tree, kTemplates + "gruwb_model.cpp", &copied);
  add_with_includes(tree, kTemplates + "example/main.c", &copied);
  copied.insert("engine/op_table.cmake");
  for (const std::string& path : copied) {
    if (starts_with(path, kTemplates)) {
      out[path.substr(kTemplates.size())] = tree.at(path);
    } else {
      out[path] = tree.at(path);
    }
  }
  for (const char* io : {"example/io_host.c", "example/io_semihosting.c"})
    out[io] = tree.at(kTemplates + io);

  const std::string array = tools::c_identifier(model_name);
  const tools::CArrayFiles data = tools::c_array_files(model.bytes, array, "model_data.h");
  out["model_data.h"] = data.header;
  out["model_data.c"] = data.source;
  out["gruwb_model_config.h"] = config_header(r, model_name, array, golden);
  out["example/example_data.h"] = example_data(golden);
  for (size_t i = 0; i < golden.inputs.size(); ++i) {
    if (golden.inputs[i].npy.dtype.empty()) continue;  // a type NumPy files here cannot carry
    const std::vector<uint8_t> npy = tools::encode_npy(golden.inputs[i].npy);
    out["example/input_" + std::to_string(i) + ".npy"] = std::string(npy.begin(), npy.end());
  }
  const BoardFiles b = board_files(tree, &out);

  std::vector<std::string> lib_sources = sources;
  lib_sources.push_back("engine/kernels/op_table.cpp");
  lib_sources.push_back("gruwb_model.cpp");
  lib_sources.push_back("model_data.c");
  std::string cmake_list, make_list;
  for (const std::string& s : lib_sources) {
    cmake_list += "  " + s + "\n";
    make_list += "  " + s + " \\\n";
  }
  make_list.resize(make_list.size() - 3);
  const std::map<std::string, std::string> values = {
      {"MODEL", model_name},
      {"OPS", report.firmware_ops},
      {"TRAINING", r.training_scope.empty() ? "0" : "1"},
      // Inference only: the kernels' backward functions stay in their sources, unreferenced.
      {"WARNINGS", r.training_scope.empty() ? "-Wall -Wno-unused-function" : "-Wall"},
      {"MODE", r.training_scope.empty()
                   ? "inference only"
                   : "with training (gruwb_model_train_step, scope " + r.training_scope + ")"},
      {"ARENA", std::to_string(golden.arena_bytes)},
      {"BOARDS", b.names},
      {"BOARD_TABLE", b.make_boards},
      {"CPU_TABLE", b.make_cpus},
      {"BOARD_CPUS", b.cmake_cpus},
      {"LIB_SOURCES", cmake_list},
      {"MAKE_SOURCES", make_list}};
  for (const char* name : {"CMakeLists.txt", "Makefile", "README.md"}) {
    out[name] = render(tree.at(kTemplates + name + ".in"), values);
    out.erase(std::string(name) + ".in");
  }
  if (!write_tree(dir, out, files, err)) return kExitFailure;
  notes->push_back("GRUWB_FW_OPS=" + report.firmware_ops + ", " + std::to_string(sources.size()) +
                   " engine sources, arena " + std::to_string(golden.arena_bytes) +
                   " B on this host; make BOARD=<" + b.names + "> in " + dir);
  return kExitOk;
}

}  // namespace gruwb::app
