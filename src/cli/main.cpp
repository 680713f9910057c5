#include <iostream>

#include "cli/app.hpp"

int main(int argc, char** argv) { return gpuprobe::cli::run(argc, argv, std::cout, std::cerr); }
