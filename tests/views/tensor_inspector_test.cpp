// TensorInspector on real models: properties, producers/consumers, the lazy
// values table, statistics against NumPy's (gen_tensor_stats.py), the
// histogram, and .npy export read back.

#include "views/tensor_inspector.h"

#include <qcustomplot.h>

#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>
#include <cmath>

#include "engine/tools/analyzer.h"
#include "engine/tools/model_file.h"
#include "engine/tools/npy.h"
#include "tests/views/loaded_model.h"
#include "views/wrapped_text_delegate.h"

using gruwb::views::TensorInspector;

namespace {

QString shared(const char* name) { return QString(GRUWB_SHARED_DIR) + "/data/models/" + name; }

std::unique_ptr<gruwb::test::LoadedWithReport> load(const QString& path) {
  return gruwb::test::load_with_report(path);
}

int tensorNamed(const gruwb::tools::SubgraphReport& subgraph, const std::string& name) {
  for (const auto& t : subgraph.tensors) {
    if (t.name == name) return t.index;
  }
  return -1;
}

}  // namespace

class TensorInspectorTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir temp_;

 private slots:
  void weightPropertiesStatsAndHistogram() {
    const auto loaded = load(shared("tflite/tflm_hello_world_float.tflite"));
    const auto& sub = loaded->report.subgraphs[0];
    // The middle Dense layer's kernel: FULLY_CONNECTED op 1, input 1.
    const int weight = sub.ops[1].inputs[1];
    TensorInspector inspector;
    inspector.setModel(&loaded->model.model, loaded->report);
    QVERIFY(inspector.showTensor(0, weight));

    QCOMPARE(inspector.property("Shape"), QString("[16,16]"));
    QCOMPARE(inspector.property("Type"), QString("FLOAT32"));
    QCOMPARE(inspector.property("Kind"), QString("constant"));
    QCOMPARE(inspector.property("Elements"), QString("256"));
    QVERIFY(inspector.property("Buffer").contains("1024 bytes"));
    QCOMPARE(inspector.property("Consumer"), QString("Op#1 FULLY_CONNECTED"));
    QCOMPARE(inspector.property("Quantization"), QString("none"));

    // NumPy's figures for this tensor (tests/views/gen_tensor_stats.py).
    const gruwb::views::TensorStats& stats = inspector.stats();
    QVERIFY(stats.valid);
    QCOMPARE(stats.count, uint64_t{256});
    QVERIFY(std::abs(stats.min - kMin) < 1e-6);
    QVERIFY(std::abs(stats.max - kMax) < 1e-6);
    QVERIFY(std::abs(stats.mean - kMean) < 1e-6);
    QVERIFY(std::abs(stats.std - kStd) < 1e-6);
    QVERIFY(std::abs(stats.sparsity - kSparsity) < 1e-9);
    uint64_t in_bins = 0;
    for (uint64_t count : stats.histogram) in_bins += count;
    QCOMPARE(in_bins, uint64_t{256});

    // Table: 16 rows x 16 columns, row headers index the first dimension.
    QCOMPARE(inspector.valuesTable()->model()->rowCount(), 16);
    QCOMPARE(inspector.valuesTable()->model()->columnCount(), 16);
    QCOMPARE(inspector.valuesTable()->model()->headerData(3, Qt::Vertical).toString(),
             QString("[3]"));
    const gruwb::tools::TensorReport& info = sub.tensors[weight];
    // The analyzer's preview starts with the same first value.
    const QString first = inspector.valuesTable()->model()->index(0, 0).data().toString();
    QVERIFY2(QString::fromStdString(info.data_preview).startsWith("[" + first.left(5)),
             qPrintable(first + " vs " + QString::fromStdString(info.data_preview)));

    QCOMPARE(inspector.histogram()->plottableCount(), 1);
    QVERIFY(inspector.saveButton()->isEnabled());
  }

  void activationsHaveNoValuesButProducersAndConsumers() {
    const auto loaded = load(shared("tflite/tflm_hello_world_float.tflite"));
    const auto& sub = loaded->report.subgraphs[0];
    const int activation = sub.ops[0].outputs[0];
    TensorInspector inspector;
    inspector.setModel(&loaded->model.model, loaded->report);
    QSignalSpy ops(&inspector, &TensorInspector::opActivated);
    QVERIFY(inspector.showTensor(0, activation));
    QCOMPARE(inspector.property("Kind"), QString("activation"));
    QCOMPARE(inspector.property("Producer"), QString("Op#0 FULLY_CONNECTED"));
    QCOMPARE(inspector.property("Consumer"), QString("Op#1 FULLY_CONNECTED"));
    QVERIFY(!inspector.stats().valid);
    QVERIFY(!inspector.saveButton()->isEnabled());
    QVERIFY(inspector.property("Buffer").contains("64 bytes at run time"));  // [1,16] float32
    // Activating the consumer row asks to show op 1.
    for (int i = 0; i < inspector.properties()->topLevelItemCount(); ++i) {
      QTreeWidgetItem* item = inspector.properties()->topLevelItem(i);
      if (item->text(0) == "Consumer") emit inspector.properties()->itemActivated(item, 1);
    }
    QCOMPARE(ops.count(), 1);
    QCOMPARE(ops.last().at(1).toInt(), 1);
    QString error;
    QVERIFY(!inspector.saveNpy(temp_.filePath("activation.npy"), &error));
    QVERIFY2(error.contains("no stored values"), qPrintable(error));
  }

  void quantizedTensorsShowScaleAndZeroPoint() {
    const auto loaded = load(shared("tflite/tflm_keyword_scrambled_svdf_int8.tflite"));
    const auto& sub = loaded->report.subgraphs[0];
    int quantized = -1;
    for (const auto& t : sub.tensors) {
      if (t.is_constant && !t.quantization.empty() && t.type == "INT8") quantized = t.index;
    }
    QVERIFY(quantized >= 0);
    TensorInspector inspector;
    inspector.setModel(&loaded->model.model, loaded->report);
    QVERIFY(inspector.showTensor(0, quantized));
    QCOMPARE(inspector.property("Quantization"),
             QString::fromStdString(sub.tensors[quantized].quantization));
    QVERIFY(inspector.stats().valid);
    QVERIFY(inspector.stats().min >= -128 && inspector.stats().max <= 127);
  }

  void savesNpyThatReadsBackBitExact() {
    QVERIFY(temp_.isValid());
    const auto loaded = load(shared("tflite/tflm_hello_world_float.tflite"));
    const auto& sub = loaded->report.subgraphs[0];
    const int weight = sub.ops[1].inputs[1];
    TensorInspector inspector;
    inspector.setModel(&loaded->model.model, loaded->report);
    QVERIFY(inspector.showTensor(0, weight));
    const QString path = temp_.filePath("weight.npy");
    QString error;
    QVERIFY2(inspector.saveNpy(path, &error), qPrintable(error));
    gruwb::tools::NpyArray array;
    std::string read_error;
    QVERIFY(gruwb::tools::read_npy(path.toStdString(), &array, &read_error));
    QCOMPARE(array.dtype, std::string("<f4"));
    QCOMPARE(array.shape, (std::vector<int64_t>{16, 16}));
    const gruwb::TensorView view = loaded->model.model.subgraph(0).tensor(weight);
    QCOMPARE(array.data.size(), view.data.size);
    QVERIFY(std::equal(array.data.begin(), array.data.end(), view.data.begin()));
  }

  // Issue 20 point 10: a clicked op shows every attribute, as `gruwb inspect --json` lists
  // them: FULLY_CONNECTED's fused activation and keep_num_dims, GRUWB_GRU's FlexBuffer map.
  void opShowsItsAttributesAndNamedInputs() {
    const auto hello = load(shared("tflite/tflm_hello_world_float.tflite"));
    TensorInspector inspector;
    inspector.setModel(&hello->model.model, hello->report);
    QVERIFY(inspector.showOp(0, 0));
    QCOMPARE(inspector.op(), 0);
    QCOMPARE(inspector.tensor(), -1);
    QCOMPARE(inspector.property("fused_activation_function"), QString("RELU"));
    QCOMPARE(inspector.property("keep_num_dims"), QString("false"));
    QCOMPARE(inspector.property("Options"), QString("FullyConnectedOptions"));
    QVERIFY(inspector.property("in W").startsWith("T#"));
    QVERIFY(inspector.property("in b").startsWith("T#"));

    const auto fused =
        load(QString(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_fused.tflite");
    inspector.setModel(&fused->model.model, fused->report);
    const auto& ops = fused->report.subgraphs[0].ops;
    int gru = -1;
    for (const auto& op : ops) gru = op.name == "CUSTOM:GRUWB_GRU" ? op.index : gru;
    QVERIFY(gru >= 0);
    QVERIFY(inspector.showOp(0, gru));
    QCOMPARE(inspector.property("reset_after"), QString("true"));
    QCOMPARE(inspector.property("activation"), QString("tanh"));
    QCOMPARE(inspector.property("recurrent_activation"), QString("sigmoid"));
    QCOMPARE(inspector.property("MACs"), QString::number(ops[gru].macs));
    QVERIFY(inspector.property("in W_x").startsWith("T#"));
    QVERIFY(inspector.property("in W_h").startsWith("T#"));
    // Double-clicking an input row opens that tensor.
    QTreeWidgetItem* weight = nullptr;
    for (int i = 0; i < inspector.properties()->topLevelItemCount(); ++i) {
      if (inspector.properties()->topLevelItem(i)->text(0) == "in W_x") {
        weight = inspector.properties()->topLevelItem(i);
      }
    }
    QVERIFY(weight);
    emit inspector.properties()->itemActivated(weight, 1);
    QCOMPARE(inspector.tensor(), ops[gru].inputs[1]);
    QCOMPARE(inspector.op(), -1);
    QVERIFY(!inspector.showOp(0, static_cast<int>(ops.size())));
  }

  // Issue 20 point 9: at the Tensor dock's default width on a 1366x768 screen (262 px inside the
  // 270-px dock) an op's attributes and inputs are shown whole: the columns fit the table (no
  // sideways scrolling) and every value that is wider than its column wraps onto rows tall enough
  // for it.
  void attributesAreShownWholeInANarrowDock() {
    const auto fused =
        load(QString(GRUWB_SOURCE_DIR) + "/resources/samples/gesture_gru_fused.tflite");
    TensorInspector inspector;
    inspector.resize(262, 600);
    inspector.show();
    QVERIFY(QTest::qWaitForWindowExposed(&inspector));
    inspector.setModel(&fused->model.model, fused->report);
    QVERIFY(inspector.showOp(0, 0));  // CUSTOM:GRUWB_GRU
    QTreeWidget* tree = inspector.properties();
    QTest::qWait(20);
    const int viewport = tree->viewport()->width();
    QVERIFY2(tree->columnWidth(0) + tree->columnWidth(1) <= viewport,
             qPrintable(QString("columns %1 + %2 > %3")
                            .arg(tree->columnWidth(0))
                            .arg(tree->columnWidth(1))
                            .arg(viewport)));
    auto* delegate = qobject_cast<gruwb::views::WrappedTextDelegate*>(tree->itemDelegate());
    QVERIFY(delegate);
    int wrapped = 0;
    for (int i = 0; i < tree->topLevelItemCount(); ++i) {
      QTreeWidgetItem* item = tree->topLevelItem(i);
      for (int column = 0; column < 2; ++column) {
        const QString text = item->text(column);
        const int needed = gruwb::views::WrappedTextDelegate::wrappedHeight(
            tree->font(), delegate->textWidth(column), text);
        QVERIFY2(tree->visualItemRect(item).height() >= needed,
                 qPrintable(QString("'%1': row %2 px, text %3 px")
                                .arg(text)
                                .arg(tree->visualItemRect(item).height())
                                .arg(needed)));
        if (tree->fontMetrics().horizontalAdvance(text) > delegate->textWidth(column)) ++wrapped;
      }
      QCOMPARE(item->toolTip(0), item->text(0));
    }
    // "T#2 [180,60] gru/recurrent_kernel" does not fit on one line here: something wrapped.
    QVERIFY(wrapped > 0);
  }

  void outOfRangeRequestsAreRefused() {
    const auto loaded = load(shared("tflite/tflm_hello_world_float.tflite"));
    TensorInspector inspector;
    QVERIFY(!inspector.showTensor(0, 0));  // no model yet
    inspector.setModel(&loaded->model.model, loaded->report);
    QVERIFY(!inspector.showTensor(1, 0));
    QVERIFY(!inspector.showTensor(0, 999));
    QVERIFY(inspector.showTensor(0, 0));
    QCOMPARE(inspector.tensor(), 0);
    Q_UNUSED(tensorNamed);
  }

 private:
  // Golden statistics of hello_world's op 1 kernel (tensor 5), from NumPy:
  // /usr/bin/python3 tests/views/gen_tensor_stats.py
  // <shared>/data/models/tflite/tflm_hello_world_float.tflite
  static constexpr double kMin = -0.6853724122047424;
  static constexpr double kMax = 0.8945462703704834;
  static constexpr double kMean = -0.0012661845303227892;
  static constexpr double kStd = 0.28949884046328805;
  static constexpr double kSparsity = 0.0;
};

QTEST_MAIN(TensorInspectorTest)
#include "tensor_inspector_test.moc"
