// A plugin from a future SDK: its IID and metadata name SDK 999. A program with another SDK
// must refuse it without creating its object (the constructor aborts to prove it is never run).

#include <QObject>
#include <cstdlib>

#include "gruwb/plugin.h"

namespace {

class Sdk999Plugin : public QObject, public gruwb::sdk::Plugin {
  Q_OBJECT
  Q_PLUGIN_METADATA(IID "org.gruwb.Plugin/999" FILE "sdk999_plugin.json")
  Q_INTERFACES(gruwb::sdk::Plugin)

 public:
  Sdk999Plugin() { std::abort(); }
  QString name() const override { return "sdk999_plugin"; }
  QString version() const override { return "9.9"; }
  QString description() const override { return "built for SDK 999"; }
};

}  // namespace

#include "sdk999_plugin.moc"
