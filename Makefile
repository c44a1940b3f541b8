# Weft build. `make` builds everything and installs it under PREFIX (default: build/ here).
#   make                 library, headers, mpicc/mpicxx, mpiexec, weft-info under $(PREFIX)
#   make generate        regenerate the bindings from api/ (needs pympistandard; see api/)
#   make test            the whole test suite (what .ci/run runs)
#   make PREFIX=/opt/weft install tree elsewhere
# The Fortran bindings (libmpifort, mpif.h, the mpi module, mpifort) are built when a Fortran
# compiler is found (FC, default gfortran); without one the C build is unchanged.
PREFIX ?= $(CURDIR)/build
CC ?= cc
CXX ?= c++
CARGO ?= cargo
PYTHON ?= python3
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)

FC_BIN := $(shell command -v $(if $(filter default,$(origin FC)),gfortran,$(FC)) 2>/dev/null)
RUST_OUT := target/release
ABI_C := crates/weft-abi/c
# UCX is not linked: crates/weft-core/build.rs compiles the ucx transport in where
# pkg-config finds UCX, and the transport loads libucp.so.0 when it is first used.
NATIVE_LIBS := -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
LIBDIR := $(PREFIX)/lib
BINDIR := $(PREFIX)/bin
INCDIR := $(PREFIX)/include
OBJDIR := $(PREFIX)/obj

.PHONY: all rust install fortran generate test clean
all: install

rust:
	$(CARGO) build --release -p weft-abi -p weft-mpiexec -p weft-tools

$(OBJDIR)/%.o: $(ABI_C)/%.c include/mpi.h
	@mkdir -p $(OBJDIR)
	$(CC) -O2 -fPIC -Iinclude -c $< -o $@

install: rust $(OBJDIR)/forwarders.o $(OBJDIR)/qmpi.o $(OBJDIR)/variadic.o
	@mkdir -p $(LIBDIR)/pkgconfig $(BINDIR) $(INCDIR)
	cp include/mpi.h $(INCDIR)/mpi.h
	$(CC) -shared -fno-use-linker-plugin -o $(LIBDIR)/libmpi_abi.so.1 -Wl,-soname,libmpi_abi.so.1 \
		-Wl,--version-script=$(ABI_C)/libmpi_abi.map -Wl,--no-undefined -Wl,-Bsymbolic-functions \
		$(OBJDIR)/forwarders.o $(OBJDIR)/qmpi.o $(OBJDIR)/variadic.o $(RUST_OUT)/libweft_abi.a $(NATIVE_LIBS)
	ln -sf libmpi_abi.so.1 $(LIBDIR)/libmpi_abi.so
	ln -sf libmpi_abi.so.1 $(LIBDIR)/libmpi.so
	# The static library: the Rust archive merged into one relocatable object (its members
	# carry LLVM bitcode sections that GNU ar's indexer cannot read, so strip those), plus the
	# forwarders.
	ld -r -o $(OBJDIR)/weft.o --whole-archive $(RUST_OUT)/libweft_abi.a
	objcopy --remove-section=.llvmbc --remove-section=.llvmcmd $(OBJDIR)/weft.o
	rm -f $(LIBDIR)/libmpi_abi.a
	ar rcs $(LIBDIR)/libmpi_abi.a $(OBJDIR)/weft.o $(OBJDIR)/forwarders.o $(OBJDIR)/qmpi.o $(OBJDIR)/variadic.o
	ln -sf libmpi_abi.a $(LIBDIR)/libmpi.a
	for b in mpiexec weft-info; do cp $(RUST_OUT)/$$b $(BINDIR)/$$b.new && mv -f $(BINDIR)/$$b.new $(BINDIR)/$$b; done
	ln -sf mpiexec $(BINDIR)/mpirun
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@COMPILER@|$(CC)|' -e 's|@VAR@|CC|' -e 's|@NAME@|mpicc|' \
		-e 's|@LANG@|C|' -e 's|@VERSION@|$(VERSION)|' -e 's|@LIBS@|-lmpi|' -e 's|@FLAGS@||' tools/mpicc.in > $(BINDIR)/mpicc
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@COMPILER@|$(CXX)|' -e 's|@VAR@|CXX|' -e 's|@NAME@|mpicxx|' \
		-e 's|@LANG@|C++|' -e 's|@VERSION@|$(VERSION)|' -e 's|@LIBS@|-lmpi|' -e 's|@FLAGS@||' tools/mpicc.in > $(BINDIR)/mpicxx
	chmod +x $(BINDIR)/mpicc $(BINDIR)/mpicxx
	ln -sf mpicxx $(BINDIR)/mpic++
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|' tools/mpi.pc.in > $(LIBDIR)/pkgconfig/mpi.pc
ifneq ($(FC_BIN),)
	$(MAKE) -s fortran
else
	@echo "no Fortran compiler (FC=$(FC)): the Fortran bindings are not built"
endif
	@echo "Weft installed under $(PREFIX)"

# The Fortran bindings: the generated C glue (fortran/mpi_f77.c) and its runtime in
# libmpifort, on top of libmpi_abi; mpif.h and the mpi module; the mpifort wrapper.
# (the C parts with the Fortran compiler's driver: mpi_f08's need its ISO_Fortran_binding.h)
FORTRAN_OBJS := $(OBJDIR)/mpi_f77.o $(OBJDIR)/fortran_runtime.o $(OBJDIR)/mpi_f08.o \
	$(OBJDIR)/fortran_runtime_f08.o $(OBJDIR)/fortran_callbacks.o $(OBJDIR)/mpi_f08_mod.o \
	$(OBJDIR)/mpi_f08_procs.o $(OBJDIR)/mpi_mod.o $(OBJDIR)/fortran_attr_cells.o
$(OBJDIR)/mpi_f77.o: fortran/mpi_f77.c fortran/weft_fortran.h include/mpi.h
	$(FC_BIN) -O2 -fPIC -Iinclude -Ifortran -c $< -o $@
$(OBJDIR)/fortran_runtime.o: fortran/runtime.c fortran/sentinels.h fortran/weft_fortran.h include/mpi.h
	$(FC_BIN) -O2 -fPIC -Iinclude -Ifortran -c $< -o $@
$(OBJDIR)/mpi_f08.o: fortran/mpi_f08.c fortran/weft_fortran.h include/mpi.h
	$(FC_BIN) -O2 -fPIC -Iinclude -Ifortran -c $< -o $@
$(OBJDIR)/fortran_attr_cells.o: fortran/attr_cells.c fortran/weft_fortran.h include/mpi.h
	$(FC_BIN) -O2 -fPIC -Wall -Iinclude -Ifortran -c $< -o $@
$(OBJDIR)/fortran_callbacks.o: fortran/callbacks.c fortran/weft_fortran.h include/mpi.h
	$(FC_BIN) -O2 -fPIC -Wall -Iinclude -Ifortran -c $< -o $@
$(OBJDIR)/fortran_runtime_f08.o: fortran/runtime_f08.c fortran/weft_fortran.h include/mpi.h
	$(FC_BIN) -O2 -fPIC -Iinclude -Ifortran -c $< -o $@
# The modules (mpi.mod, mpi_f08.mod) land in $(INCDIR); mpi_f08's handle operators are code.
$(OBJDIR)/mpi_f08_mod.o: fortran/mpi_f08.f90
	@mkdir -p $(INCDIR)
	$(FC_BIN) -O2 -fPIC -Wno-c-binding-type -J$(INCDIR) -c $< -o $@

# mpi_f08's specific procedures (MPI_Send_f08ts, PMPI_Send_f08ts ...), on its modules.
$(OBJDIR)/mpi_f08_procs.o: fortran/mpi_f08_procs.f90 $(OBJDIR)/mpi_f08_mod.o
	$(FC_BIN) -O2 -fPIC -Wno-c-binding-type -I$(INCDIR) -J$(OBJDIR) -c $< -o $@

# The mpi module includes mpif.h and has code (MPI_Sizeof).
$(OBJDIR)/mpi_mod.o: fortran/mpi.f90 fortran/mpif.h
	@mkdir -p $(INCDIR)
	$(FC_BIN) -O2 -fPIC -Ifortran -J$(INCDIR) -c $< -o $@

fortran: $(FORTRAN_OBJS)
	$(FC_BIN) -shared -o $(LIBDIR)/libmpifort.so.1 -Wl,-soname,libmpifort.so.1 -Wl,--no-undefined \
		$(FORTRAN_OBJS) -L$(LIBDIR) -lmpi_abi -Wl,-rpath,'$$ORIGIN'
	ln -sf libmpifort.so.1 $(LIBDIR)/libmpifort.so
	cp fortran/mpif.h fortran/weft_fortran.h $(INCDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@COMPILER@|$(FC_BIN)|' -e 's|@VAR@|FC|' -e 's|@NAME@|mpifort|' \
		-e 's|@LANG@|Fortran|' -e 's|@VERSION@|$(VERSION)|' -e 's|@LIBS@|-lmpifort -lmpi|' \
		-e 's|@FLAGS@|$(if $(findstring gfortran,$(FC_BIN)),-fallow-argument-mismatch,)|' \
		tools/mpicc.in > $(BINDIR)/mpifort
	chmod +x $(BINDIR)/mpifort
	ln -sf mpifort $(BINDIR)/mpif77
	ln -sf mpifort $(BINDIR)/mpif90
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|' tools/mpi-fort.pc.in > $(LIBDIR)/pkgconfig/mpi-fort.pc

generate:
	$(PYTHON) api/gen.py
	$(PYTHON) api/gen_fortran.py

test: install
	$(PYTHON) tests/run.py --prefix $(PREFIX)

clean:
	$(CARGO) clean
	rm -rf build
