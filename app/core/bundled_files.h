#pragma once
// Where the files that ship with GRU Workbench are: the bundled samples (resources/samples)
// and the documentation (docs/, README.md). An installed tree has them under
// <prefix>/share/gru-workbench/ and <prefix>/share/doc/gru-workbench/ (packaging/CMakeLists.txt);
// a binary in the build tree uses the source tree's. The welcome page and Help menu use these;
// program_folder() and run_from_build_tree() also place firmware images and plugins.

#include <QString>
#include <QStringList>

namespace gruwb::app {

// The folder of the running program, "" when unknown. From /proc/self/exe: gruwb has no
// QCoreApplication, which applicationDirPath() needs.
QString program_folder();
// Whether the running program is one this build made, run from its build tree (it then finds
// the build's own samples, firmware images and plugins) rather than an installed copy.
bool run_from_build_tree();

// The first existing folder of: $GRUWB_SAMPLES_DIR, <binary>/../share/gru-workbench/samples,
// <install prefix>/share/gru-workbench/samples, the source tree's resources/samples (binary in
// the build tree only); "" when none exists.
QString samples_folder();
// Same search for the documentation folder (holds gui.md ...): $GRUWB_DOCS_DIR,
// share/doc/gru-workbench/docs, the source tree's docs/.
QString docs_folder();

// The model and dataset files of samples_folder(), by name ("" folder: empty).
QStringList bundled_samples();
// One line on what a bundled sample is ("" for an unknown name).
QString sample_description(const QString& file_name);

}  // namespace gruwb::app
