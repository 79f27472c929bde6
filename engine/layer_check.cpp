// Linked with one engine layer's whole archive and only the layers below it
// (engine/CMakeLists.txt): the program builds only when that layer calls
// nothing above it. It does nothing when run.

int main() { return 0; }
