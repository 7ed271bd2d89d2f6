// The cko binary: everything happens in the cli layer.
#include "cko/cli/command.hpp"

int main(int argc, char** argv) {
    return cko::cli::run_cli(argc, argv);
}
