# Weft build. `make` builds everything and installs it under PREFIX (default: build/ here).
#   make                 library, headers, mpicc/mpicxx, mpiexec, weft-info under $(PREFIX)
#   make generate        regenerate the bindings from api/ (needs pympistandard; see api/)
#   make test            the whole test suite (what .ci/run runs)
#   make PREFIX=/opt/weft install tree elsewhere
PREFIX ?= $(CURDIR)/build
CC ?= cc
CXX ?= c++
CARGO ?= cargo
PYTHON ?= python3
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)

RUST_OUT := target/release
ABI_C := crates/weft-abi/c
NATIVE_LIBS := -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
LIBDIR := $(PREFIX)/lib
BINDIR := $(PREFIX)/bin
INCDIR := $(PREFIX)/include
OBJDIR := $(PREFIX)/obj

.PHONY: all rust install generate test clean
all: install

rust:
	$(CARGO) build --release -p weft-abi -p weft-mpiexec -p weft-tools

$(OBJDIR)/%.o: $(ABI_C)/%.c include/mpi.h
	@mkdir -p $(OBJDIR)
	$(CC) -O2 -fPIC -Iinclude -c $< -o $@

install: rust $(OBJDIR)/forwarders.o $(OBJDIR)/variadic.o
	@mkdir -p $(LIBDIR)/pkgconfig $(BINDIR) $(INCDIR)
	cp include/mpi.h $(INCDIR)/mpi.h
	$(CC) -shared -fno-use-linker-plugin -o $(LIBDIR)/libmpi_abi.so.1 -Wl,-soname,libmpi_abi.so.1 \
		-Wl,--version-script=$(ABI_C)/libmpi_abi.map -Wl,--no-undefined -Wl,-Bsymbolic-functions \
		$(OBJDIR)/forwarders.o $(OBJDIR)/variadic.o $(RUST_OUT)/libweft_abi.a $(NATIVE_LIBS)
	ln -sf libmpi_abi.so.1 $(LIBDIR)/libmpi_abi.so
	ln -sf libmpi_abi.so.1 $(LIBDIR)/libmpi.so
	# The static library: the Rust archive merged into one relocatable object (its members
	# carry LLVM bitcode sections that GNU ar's indexer cannot read, so strip those), plus the
	# forwarders.
	ld -r -o $(OBJDIR)/weft.o --whole-archive $(RUST_OUT)/libweft_abi.a
	objcopy --remove-section=.llvmbc --remove-section=.llvmcmd $(OBJDIR)/weft.o
	rm -f $(LIBDIR)/libmpi_abi.a
	ar rcs $(LIBDIR)/libmpi_abi.a $(OBJDIR)/weft.o $(OBJDIR)/forwarders.o $(OBJDIR)/variadic.o
	ln -sf libmpi_abi.a $(LIBDIR)/libmpi.a
	for b in mpiexec weft-info; do cp $(RUST_OUT)/$$b $(BINDIR)/$$b.new && mv -f $(BINDIR)/$$b.new $(BINDIR)/$$b; done
	ln -sf mpiexec $(BINDIR)/mpirun
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@COMPILER@|$(CC)|' -e 's|@VAR@|CC|' -e 's|@NAME@|mpicc|' \
		-e 's|@LANG@|C|' -e 's|@VERSION@|$(VERSION)|' tools/mpicc.in > $(BINDIR)/mpicc
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@COMPILER@|$(CXX)|' -e 's|@VAR@|CXX|' -e 's|@NAME@|mpicxx|' \
		-e 's|@LANG@|C++|' -e 's|@VERSION@|$(VERSION)|' tools/mpicc.in > $(BINDIR)/mpicxx
	chmod +x $(BINDIR)/mpicc $(BINDIR)/mpicxx
	ln -sf mpicxx $(BINDIR)/mpic++
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|' tools/mpi.pc.in > $(LIBDIR)/pkgconfig/mpi.pc
	@echo "Weft installed under $(PREFIX)"

generate:
	$(PYTHON) api/gen.py

test: install
	$(PYTHON) tests/run.py --prefix $(PREFIX)

clean:
	$(CARGO) clean
	rm -rf build
