# The course kit as an image, for a TA without Linux: `course autograde` and nbgrader on a course
# folder mounted at /course. Built only by the Makefile targets `make test` runs (image-deps: .venv
# and the sandbox's packages), so every step is tested where no container engine is. Build and run
# commands, and the flags the sandbox needs: README, "A TA's laptop through the image".
FROM python:3.11-slim-bookworm

# An extra package index for pip (for torch's CPU wheels), if one is wanted: --build-arg.
ARG PIP_EXTRA_INDEX_URL

# make itself, to run the Makefile; everything else comes from the Makefile.
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends make >/dev/null \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/course
COPY . .
RUN make image-deps && rm -rf /var/lib/apt/lists/* /root/.cache

# Not root by default: bubblewrap then makes its namespaces inside a user namespace, which needs no
# capability Docker withholds. Any uid may run it (docker run --user): its home is /tmp.
ENV PATH=/opt/course/.venv/bin:$PATH HOME=/tmp
RUN useradd --uid 1000 --no-create-home --home-dir /tmp course
USER course
WORKDIR /course
CMD ["course", "--help"]
