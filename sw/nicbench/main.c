// SPDX-License-Identifier: BSD-2-Clause
/*
 * main.c: nicbench, the NIC's measurement CLI. Runs on any backend (nic_backend.h): the Verilator
 * simulation ("sim", simulated time and model counters) or a board ("vfio", CLOCK_MONOTONIC).
 *
 *   nicbench [--backend sim|vfio] [--opts K=V,...] [--json FILE] [--quiet] [--timeout-ms N]
 *            info | stats | csr | dma | loopback | misaligned | tx | rr [command options]
 *
 * Each command is cmd_<name>.c, whose header says what it measures; this file holds the usage
 * text (every command and option), option parsing, the JSON document, the simulator speed and
 * what the commands share (nicbench.h). Every result carries the backend's params_json();
 * figures come from the backend clock (now_ns) and backend counters, limits from the backend's
 * model (model_limit_*_kbps counters).
 *
 * Exit status: 0 ok, 1 measurement/verification failure or backend error, 2 usage error.
 */
#define _GNU_SOURCE
#include "nicbench.h"

#define MSI_WAIT_SLICE_NS 10000u         /* irq_wait slice between backend error checks */

static const char *const usage_text =
"NAME\n"
"    nicbench - measure CSR access costs, DMA throughput and DMA correctness of the NIC\n"
"\n"
"SYNOPSIS\n"
"    nicbench [--backend sim|vfio] [--opts K=V,...] [--json FILE] [--quiet] [--timeout-ms N]\n"
"             <command> [command options]\n"
"    nicbench --help\n"
"\n"
"DESCRIPTION\n"
"    Drives the NIC through a backend: `sim` (the Verilated SoC against the C++ PCIe\n"
"    root-complex model; times are simulated ns, model counters are available) or `vfio` (a\n"
"    board; VFIO or sysfs; times are CLOCK_MONOTONIC ns). Every result printed and written to\n"
"    JSON carries the backend's parameters (for sim: every link/model parameter).\n"
"\n"
"GLOBAL OPTIONS\n"
"    --backend sim|vfio   backend (default sim)\n"
"    --opts K=V,...       backend options. sim: model parameters (gen, lanes, mps, mrrs, rcb,\n"
"                         mem_read_latency_ns, data_width, ...: see sw/sim/link_params.h;\n"
"                         trace=FILE, peer=1 two NICs back to back, pcap=FILE, wire_ns=N:\n"
"                         sw/sim/backend_sim.cpp);\n"
"                         vfio: dev=0000:01:00.0[,mode=auto|vfio|sysfs][,root=DIR]\n"
"    --json FILE          also write one JSON document: {\"tool\":\"nicbench\", \"command\",\n"
"                         \"backend\", \"params\", \"records\":[...], \"status\", ...}, also\n"
"                         when the run fails (\"status\":\"fail\", \"error\"); sim:\n"
"                         \"model_checks\", the host model's error counts (boundary_violations,\n"
"                         mps_violations, ...; each 0 on a run that passed)\n"
"    --quiet              print only errors and the final status line\n"
"    --timeout-ms N       longest wait for an MSI or for DMA data, backend time (default 100)\n"
"    -h, --help           this text\n"
"    Output files (--json, and the sim backend's trace=, sample_log=, pcap=) are created\n"
"    before the run: one that cannot be written is an error, exit 2, before any simulated\n"
"    time. Each is written as FILE.part and renamed to FILE when complete; a run stopped by\n"
"    a usage error leaves none.\n"
"\n"
"COMMANDS\n"
"    info\n"
"        INFO_MAGIC (expects 0x4e494331), version, build configuration, identifier,\n"
"        CTRL_SCRATCH write/read-back, the device's negotiated MPS/MRRS, backend parameters,\n"
"        and the register blocks the identification block lists: type, version (and whether\n"
"        this binary knows that layout), BAR0 base, MSI numbers, parameter.\n"
"\n"
"    stats [--all]\n"
"        The NIC's counters as ethtool -S shows a driver's: every non-zero counter of the nic\n"
"        block by its ethtool name (--all: every one, with the zeros and the state registers),\n"
"        per TX queue packets and bytes, per TX vector interrupts, with what each counts.\n"
"\n"
"    csr [--samples N] [--dma-window-ns N]\n"
"        (a) MMIO write cost (CTRL_SCRATCH) and (b) MMIO read round trip (CTRL_SCRATCH) at\n"
"        idle, as distributions over N samples (default 1000): min / median / p99 / max ns,\n"
"        each call timed with now_ns() before and after. (c) The read distribution while a\n"
"        card-to-host DMA stream runs (writer in loop mode over a 64 KiB buffer, pattern\n"
"        generator on, descriptor IRQs off). (d) DMA hold-off with that stream running:\n"
"        backend counters probe.dma_wr_stall, probe.dma_wr_stall_csr, probe.csr_busy,\n"
"        probe.cycles (sim; n/a on hardware) over a window of back-to-back CSR reads (at least\n"
"        N reads and at least --dma-window-ns ns, default 0) and over an equally long window\n"
"        without CSR access: cycles the DMA write request stream was held off (valid, not\n"
"        ready) per CSR read, and total stall cycles in each window. The PCIe counterpart of\n"
"        \"CSR access inserts PCI STOPs\" (Hughes-Jones et al.).\n"
"\n"
"    dma [--dir h2c|c2h|both] [--sizes LIST] [--min-bytes N] [--inflight LIST]\n"
"        [--offset LIST] [--mps LIST] [--mrrs LIST]\n"
"    dma --latency [--sizes LIST] [--count N] [--offset LIST] [--mps LIST] [--mrrs LIST]\n"
"        Throughput vs transfer size (default sizes 256..2M: powers of two), per size and\n"
"        --inflight value: size, dir, mps, mrrs, inflt (descriptors queued), reps, time_ns\n"
"        per transfer, Gb/s and MB/s (10^6 B/s), Mtr/s (10^6 transfers/s), the model limit\n"
"        (model_limit_*_kbps counter of the backend, n/a when it has none) and\n"
"        measured/limit. Every transfer's data is verified.\n"
"        --inflight 1 (default): one transfer at a time, r = max(3, ceil(min_bytes/size))\n"
"        times (min_bytes default 4M); time_ns is the median.\n"
"          h2c: a 4 KiB-aligned buffer holds the checker's pattern; one reader descriptor\n"
"            (IRQ off); timed from the reader enable to the pattern checker's MSI; checker\n"
"            bytes and errors verified.\n"
"          c2h: the buffer holds a sentinel; one writer descriptor (IRQ on, last off); the\n"
"            writer is enabled, then timed from the generator enable to the writer's MSI\n"
"            and the buffer's last 16 bytes holding the pattern; the whole buffer is\n"
"            verified. (The generator is started after the writer because a disabled writer\n"
"            drops data.)\n"
"        --inflight N (2..256, the descriptor table's depth; a list runs each): pcie-bench's\n"
"          bandwidth test. N descriptors in LitePCIe's table in loop mode, where the engine\n"
"          puts each back as it completes: the table stays full and the engine never waits\n"
"          for the host. r = max(2N, ceil(min_bytes/size)) transfers through N slots of a\n"
"          2 MiB buffer (stride: size rounded up to a power of two, so no request crosses\n"
"          4 KiB), one continuous pattern stream; time_ns = run time / r. Inflt is N, at\n"
"          most the slots the buffer holds (one only: one at a time); h2c keeps at least\n"
"          32 KiB queued (see below), raising N for small sizes; equal depths run once.\n"
"          h2c: timed from the reader enable to the checker's MSI after r transfers. The\n"
"            host polls the checker's byte count (one MMIO read per N/4 transfers) and\n"
"            rewrites a slot one lap ahead once its bytes are counted; near the end the table\n"
"            goes back to prog mode, so the engine stops with every byte it read checked:\n"
"            checker bytes and errors verified.\n"
"          c2h: timed from the generator enable to the r-th transfer's last 16 bytes in\n"
"            place; each transfer is verified in place as it lands, before its slot is\n"
"            reused (no MMIO during the run).\n"
"        --latency: pcie-bench's read latency, sim backend only (n/a elsewhere). Per size\n"
"          (default 64..4K), N single h2c transfers one at a time as above (--count,\n"
"          default 1000; checker-verified), each timed at the PHY in simulated time: from\n"
"          its first memory read request's first beat on the device's TX stream to the last\n"
"          beat of its last completion taken by the device (the host model's per-read\n"
"          timestamps, counters model_read_*). Printed: count, reqs (read requests per\n"
"          transfer: size / the device's MRRS), min / median / p99 / max / mean ns.\n"
"        --mps/--mrrs (sim): one backend per (mps, mrrs) pair, reopened with those options;\n"
"          e.g. --mps 128,256,512 --mrrs 128,256,512,1024,2048,4096. Without them the\n"
"          backend's own setting is used (sim model default MPS 256, MRRS 512). On vfio MPS\n"
"          and MRRS are fixed by the platform: the sweep is reported and run once.\n"
"        --offset LIST (bytes, 0..4095; also A..B:STEP, e.g. 0..4080:16): pcie-bench's\n"
"          alignment test. Each transfer's host buffer starts this far past a 4 KiB page\n"
"          boundary (default 0); every measurement runs at each offset (column off_B, JSON\n"
"          offset). With --offset the --inflight slots are whole pages (size + 4095 rounded\n"
"          up to 4 KiB), each transfer at the offset in its page, so a transfer whose offset\n"
"          + size passes 4 KiB straddles a page boundary: the device must split its requests\n"
"          there (the sim model counts any that cross it: model_checks.boundary_violations).\n"
"        Sizes and offsets must be multiples of the datapath width (16 B at 128 bits, 8 B at\n"
"        64 bits): others are usage errors.\n"
"        JSON: experiment \"dma\" (mode \"bandwidth\": offset, inflight, reps, time_ns, run_ns,\n"
"        gbps, mbps, tps, limit_gbps, ratio) and \"dma_latency\" (mode \"latency\": count,\n"
"        requests, lat_min_ns, lat_median_ns, lat_p99_ns, lat_max_ns, lat_mean_ns).\n"
"\n"
"    loopback [--count N] [--seed S] [--max-size N] [--unaligned] | --misaligned\n"
"        PCIE_DMA0_LOOPBACK on: N transfers (1..1000000, default 16) of random data, random\n"
"        sizes (multiples of 16 B up to --max-size, default 64K) at random 4 KiB-aligned offsets\n"
"        (--unaligned: 16 B-aligned offsets, which may make LitePCIe emit requests crossing a\n"
"        4 KiB boundary); writer descriptor to dst, reader descriptor from src, wait for the\n"
"        writer MSI and the data; bit-exact compare. Mismatches are printed.\n"
"    loopback --misaligned\n"
"        Descriptors the DMA may not move, pushed without the library's check: reader and\n"
"        writer at byte offsets 0,1,2,3,4,8,12 (both, or one of them) of 64, 36, 17, 1 and 0\n"
"        bytes. Each engine must refuse its descriptor in hardware (PCIE_DMA0_GUARD_*_REFUSED\n"
"        + 1, no TLP of its kind; refused exactly when address or length is not a multiple\n"
"        of PCIE_DMA0_GUARD_ALIGN, or 0) or take it; taken by both, the bytes arrive exactly;\n"
"        64 guard bytes either side of the destination unchanged. Sim backend only (the host\n"
"        model's TLP counts). JSON: experiment \"loopback_misaligned\".\n"
"\n"
"    misaligned\n"
"        Every host address a register of the NIC datapath or the analyzer's deep capture\n"
"        takes, programmed at byte offsets straight to its register (what the library\n"
"        refuses): TX ring base and writeback address, RX descriptor and completion ring\n"
"        bases at +0,1,2,3,4,8,12, the stream's ring base at +0,1,4,8,16,64,2048 (it must be\n"
"        4 KiB aligned). Offset 0 must move exactly (the frame sent and written back, the RX\n"
"        ring read and a looped frame received, entries streamed); any other must be refused\n"
"        in hardware: the address's error counter + 1 (nic_txe_err_base, nic_txq_err_wb_addr,\n"
"        nic_rxe_err_base, analyzer_stream_refused) and its status bit (txe_base_bad,\n"
"        txq_wb_bad, rxe_base_bad, stream_status.refused), no MRd or MWr TLP in the host\n"
"        model's counts, no frame, and every byte of the DMA area (rings, buffers, guards)\n"
"        unchanged. Sim backend only. JSON: experiment \"misaligned\".\n"
"\n"
"    tx [--frames N] [--sizes LIST | --size-range LO-HI] [--queues Q] [--ring R] [--batch B]\n"
"       [--inflight LIST] [--window LIST] [--rx-ring R] [--poll-ns N] [--csum]\n"
"       [--buf-offset N|random[:SEED]]\n"
"       [--coalesce rx-usecs=U,rx-frames=F,tx-usecs=..,...]\n"
"    tx --io LIST [--io-frame F] [--min-bytes N] [--queues Q] [--ring R] [--csum] ...\n"
"    tx --gap-ns LIST [--frames N] [--sizes LIST] [--rx-ring R] [--rx-refill-ns N] [--csum] ...\n"
"        Sends N frames (default 10000) per run of each size (--size/--sizes, bytes\n"
"        without FCS, 20..9216, default 60) over Q TX queues (default 1; rings of R\n"
"        descriptors, default 64, one buffer per slot) through the NIC datapath,\n"
"        LiteEth's MAC and its loopback PHY back into the RX ring (--rx-ring, default\n"
"        1024 buffers). The host (sw/lib/nic_queues.c) posts B frames per doorbell\n"
"        (default min(32, R-1)), keeps at most --inflight descriptors per queue posted\n"
"        and not completed (default R-1, also the queue's device limit; a list runs each:\n"
"        throughput vs descriptors in flight), reclaims from the consumer-index writeback\n"
"        and reposts RX buffers with one doorbell per B frames: no MMIO read on the hot\n"
"        path. Every frame is checked bit-exact and in order per queue (it carries its\n"
"        queue, run and sequence number). --inflight limits only the TX DMA: a descriptor\n"
"        completes when its frame is read into the TX FIFO, long before it is on the wire.\n"
"        --window LIST (frames, 1..65536; a list runs each, within each --inflight): an\n"
"        end-to-end window per queue, as a transport protocol's (TCP, OSI TP4): at most W\n"
"        frames of a queue sent and not yet received back at the RX ring (--inflight still\n"
"        applies). Posts wait for min(B, W) frames of the window to be open, as for a batch:\n"
"        W <= B sends the window whole once all of it is back, --batch 1 sends each frame as\n"
"        soon as one comes back (sliding). A frame's round trip is then TX DMA, wire, RX DMA\n"
"        and writeback: window 1 gives size / round trip, larger windows more up to the line\n"
"        rate; rtt_us (JSON rtt_mean_ns, rtt_min_ns, rtt_max_ns) is the mean from a frame's\n"
"        post to the poll that saw it received; JSON window is null without --window. Not\n"
"        with --io or --gap-ns. Printed per run: frames, bytes, simulated time from the\n"
"        first doorbell to the last frame received, Gb/s of frame bytes and at the wire\n"
"        (+4 B FCS +20 B preamble and gap, frames padded to 60 B), Mpps, the ratio to the\n"
"        1 Gb/s line rate, the window's mean round trip, MMIO read TLPs in that window\n"
"        (model.tlps_down_mrd; must be 0), doorbells, drops by cause (every nic_* drop\n"
"        and error counter), interrupts (nic_txirq/rxirq_irqs) and MSIs received (per\n"
"        vector: msis_tx/msis_rx in the JSON; an MSI on any other vector fails the run).\n"
"        Coalescing defaults: frames 1, usecs 0. --size-range LO-HI: one run whose frames\n"
"        have sizes drawn uniformly in LO..HI (per frame, from its queue and sequence\n"
"        number).\n"
"        --buf-offset N (0..4095): every TX frame's buffer starts N bytes into a page and\n"
"        every RX buffer N rounded down to 16 B (the RX engine takes 16-byte aligned\n"
"        buffers only), each buffer in page-aligned room of its own, as a kernel driver's\n"
"        skbs sit in their pages; frames then cross 4 KiB boundaries, which the NIC's DMA\n"
"        splits. random[:SEED]: an offset drawn for every TX frame posted and every RX\n"
"        buffer posted (SEED default: from the clock; printed, JSON buf_offset_seed).\n"
"        Default: buffers packed 64 B apart. Any mode.\n"
"        --csum: the host computes the Internet checksum (RFC 1071) over every frame from\n"
"        byte 14 and writes it into bytes 20..21 before posting; the receive side verifies it\n"
"        on every frame (frames of 22 B at least). Every run also prints host_ns/fr, the\n"
"        host's own CPU time per frame sent (CLOCK_THREAD_CPUTIME_ID: wall-clock CPU of the\n"
"        host thread, not simulated time; frame fill, checksum, descriptor post and reclaim,\n"
"        RX poll and check, without the time inside backend calls, where the simulator\n"
"        runs), and csum_ns/fr, its checksum part: compare runs with and without --csum.\n"
"        In simulation the host's work takes no simulated time, so --csum changes no\n"
"        simulated figure.\n"
"        --io LIST (bytes, 60..16M; SGI's HIPPI \"write size\"): each TX queue is one\n"
"        submitter of blocking I/Os of N bytes, the Q submitters interleaved in the host\n"
"        thread, each with one I/O open: an I/O is k = ceil(N / F) frames of N/k bytes\n"
"        (--io-frame F, default 9000, 60..9216), posted as far as the ring takes with one\n"
"        doorbell each time until all is posted; the next I/O starts when the consumer\n"
"        index has passed the whole I/O. Each submitter makes max(3, ceil(M / (N * Q)))\n"
"        I/Os (--min-bytes M, default 1M). Printed per I/O size: I/Os, bytes, simulated\n"
"        time to the last I/O done, MB/s (10^6 B/s), Gb/s, mean simulated time per I/O,\n"
"        and MB/s to the last frame received (the TX FIFO lets the submitters run ahead).\n"
"        Not with --sizes, --size-range, --frames, --batch, --inflight, --window.\n"
"        --gap-ns LIST (0..10000000; Hughes-Jones' UDPmon): one frame per doorbell, posts\n"
"        G simulated ns apart start to start (later only when the TX ring is full; the host\n"
"        idles in simulated time between posts); a list runs each gap. Printed: the offered\n"
"        rate (first to last post), frames received and the received rate at the RX ring\n"
"        (first to last frame), frames lost and the NIC's drop counters by cause. A frame the\n"
"        NIC drops for want of an RX buffer (rxe_drop_no_buffer) or RX FIFO room\n"
"        (rxfifo_drop_full) is a result, not a failure; any other loss, corruption or\n"
"        reordering still fails. --rx-refill-ns N: the receiver reposts RX buffers only every\n"
"        N ns (default: per batch), so that with a small --rx-ring it is the bottleneck.\n"
"        Fails on any loss (except as above), corruption, reordering, bad checksum, drop or\n"
"        hot-path MMIO read.\n"
"\n"
"    rr [--sizes LIST] [--count N] [--poll-ns N] [--reply-size N] [--irq [--coalesce ...]]\n"
"        Needs the sim backend opened with peer=1 (two SoCs, each with its own PCIe host\n"
"        model and memory, their GMII pins wired back to back; add pcap=FILE to capture\n"
"        both directions, wire_ns=N for a wire delay). Per frame size (bytes without FCS,\n"
"        default 60,128,512,1514), N round trips (default 200): host A sends a request on\n"
"        TX queue 0 (one doorbell), host B polls its RX ring, checks it and sends a\n"
"        response of the same size (--reply-size N: of N bytes, 20..9216, e.g. HP OTS's\n"
"        100 B replies to 100 B and 3840 B requests), A polls for it and checks it.\n"
"        Round-trip time in simulated ns from before A's send to A's poll seeing the\n"
"        response (polls every --poll-ns, default 8 = one 125 MHz cycle). Printed: count,\n"
"        min / median / p99 / max / mean RTT, half the median RTT, transactions per\n"
"        simulated second (10^9 / mean RTT: one transaction at a time), one request\n"
"        frame's wire time, MMIO read TLPs of each host over the round trips\n"
"        (model.tlps_down_mrd; must be 0). RX buffers are\n"
"        reposted and TX descriptors reclaimed between round trips, outside the timed\n"
"        path.\n"
"        --irq: each host sleeps until its RX MSI, then reads its RX ring (an\n"
"        interrupt-driven driver) instead of polling; after each send it waits for its\n"
"        TX MSI (vector 0) and reclaims. Each MSI must find what it announces in host\n"
"        memory (the frame's consumer-index writeback, its completion record): one that\n"
"        does not is an ordering error.\n"
"        --coalesce rx-usecs=U,rx-abs-usecs=A,rx-frames=F,... (as tx's, on both hosts;\n"
"        needs --irq): the delay the coalescer adds to a round trip. JSON: irq,\n"
"        rx_msis_a/b, tx_msis_a/b (MSIs taken), irq_order_errors, coalesce.\n"
"        Fails on any corrupted or missing frame, hot-path MMIO read or ordering error.\n"
"\n"
"    fuzz [--frames N] [--queues Q] [--size-range MIN-MAX] [--seed S] [--desc-fuzz P]\n"
"         [--ctl-fuzz P] [--watchdog-us N] [--progress N]\n"
"        The device fuzzer and scoreboard (docs/faults.md): N good frames (default 2000) of\n"
"        random size (default 60-1514) over Q TX queues (default: up to 4), each checked on\n"
"        the RX ring through the MAC loopback. --desc-fuzz P: each descriptor posted is, with\n"
"        probability P, one of: a good frame split in 2-3 pieces at odd offsets, a good\n"
"        frame with unknown flag bits, a zero-length or an oversized descriptor, a chain\n"
"        without EOP (the driver then resets the queue). --ctl-fuzz P: per batch, with\n"
"        probability P, the next of: a TX queue reset and an RX ring reset with DMA in\n"
"        flight, a TX and an RX doorbell past the ring, random coalescing values. A reset\n"
"        posts again the frames it dropped before the fetch. A stall of --watchdog-us\n"
"        (default 2000) simulated us runs the driver's reset path on every queue and the RX\n"
"        ring. With the sim backend's fault_* --opts it is the fault test. All from one seed\n"
"        (printed; --seed replays). --progress N prints a line every N frames sent. Fails on\n"
"        any corrupted or reordered frame, or a frame lost without a device counter.\n"
"\n"
"    LIST: comma-separated numbers and ranges; A..B = A, 2A, 4A, ... <= B. Numbers take K, M,\n"
"    G suffixes (binary) and 0x prefixes: 256..2M, 4096,6000,8K, 0x1000.\n"
"\n"
"OUTPUT\n"
"    A table per experiment on stdout (right-aligned; units in the headers), the backend\n"
"    parameters, and for the sim backend the simulator speed (simulated cycles per wall\n"
"    second). The backend's last_error() is checked after every experiment: any backend or\n"
"    model error (malformed TLP, 4 KiB crossing, MPS violation, ...) fails the command.\n"
"\n"
"EXIT STATUS\n"
"    0 success, 1 measurement/verification failure or backend error, 2 usage error.\n"
"\n"
"EXAMPLES\n"
"    nicbench --backend sim --opts gen=2,lanes=4,mps=256,mrrs=512 info\n"
"    nicbench --backend sim --json results/csr.json csr --samples 2000\n"
"    nicbench --backend sim --opts mps=128,mrrs=256 dma --dir c2h --sizes 4096..1M\n"
"    nicbench dma --dir both --sizes 64..4K --inflight 1,32\n"
"    nicbench dma --latency --sizes 64..4K --count 1000\n"
"    nicbench dma --dir both --sizes 256 --inflight 32 --offset 0..240:16,256..3840:256\n"
"    nicbench --json results/dma.json dma --mps 128,256,512 --mrrs 128,256,512,1024,2048,4096\n"
"    nicbench --backend vfio --opts dev=0000:01:00.0 dma --dir both\n"
"    nicbench loopback --count 100 --seed 7 --max-size 32K\n"
"    nicbench --json results/tx.json tx --sizes 60,128,512,1512 --queues 4\n"
"    nicbench tx --size 60 --inflight 1,2,4,8,16,32,63\n"
"    nicbench tx --io 256..2M --queues 2\n"
"    nicbench tx --gap-ns 0,2000,5000,10000 --frames 2000 --rx-ring 16 --rx-refill-ns 20000\n"
"    nicbench tx --sizes 1514 --csum\n"
"    nicbench --opts peer=1,pcap=wire.pcapng rr --sizes 60,1514 --count 100\n"
"    nicbench --opts peer=1 rr --sizes 100,3840 --reply-size 100\n";

/* --- context, errors, JSON --------------------------------------------------------------------- */

uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Counter or "n/a". */
bool counter(struct ctx *c, const char *name, uint64_t *v)
{
    return nic_counter(c->b, name, v) == 0;
}

void json_opt_u64(struct bu_json *j, const char *key, bool have, uint64_t v)
{
    bu_json_key(j, key);
    if (have)
        bu_json_u64(j, v);
    else
        bu_json_null(j);
}

void json_opt_double(struct bu_json *j, const char *key, bool have, double v)
{
    bu_json_key(j, key);
    if (have)
        bu_json_double(j, v);
    else
        bu_json_null(j);
}

/* --- backend open/close ------------------------------------------------------------------------ */

static void speed_begin(struct ctx *c)
{
    uint64_t v;
    if (counter(c, "probe.cycles", &v)) {
        c->have_cycles = true;
        c->cyc0 = v;
        c->wall0 = wall_ns();
        c->sim0 = nic_now_ns(c->b);
    }
}

static void speed_end(struct ctx *c)
{
    uint64_t v;
    if (c->b && c->have_cycles && counter(c, "probe.cycles", &v)) {
        c->cycles += v - c->cyc0;
        c->wall_ns += wall_ns() - c->wall0;
        c->sim_ns += nic_now_ns(c->b) - c->sim0;
    }
}

/* Stop everything that could still move data: generator, both engines, loopback, MSIs. */
void quiesce(struct ctx *c)
{
    if (!c->b)
        return;
    nic_pattern_gen_enable(c->b, false);
    nic_dma_stop(c->b, NIC_DMA_READER);
    nic_dma_stop(c->b, NIC_DMA_WRITER);
    nic_dma_loopback(c->b, false);
    nic_msi_enable(c->b, 0);
}

/* The host model's counts of errors in device TLPs and host requests (sw/sim/model_log.h):
 * JSON "model_checks". */
static const char *const model_check_names[] = {
    "errors", "mps_violations", "mrrs_violations", "boundary_violations", "bad_address",
    "unexpected_completion", "completion_timeouts", "unsupported_tlps", "length_errors",
    "be_errors", "framing_errors", "byte_enable_errors", "poisoned_tlps", "bad_mmio",
    "ur_completions", "iommu_faults"};
#define N_MODEL_CHECKS (sizeof model_check_names / sizeof model_check_names[0])
_Static_assert(N_MODEL_CHECKS <= sizeof ((struct ctx *)0)->model_checks / sizeof(uint64_t),
               "ctx.model_checks too small");

/* Faults the host model injected (--opts fault_*; sw/sim/link_params.h): JSON "model_faults"
 * and one line on stderr when any was. */
static const char *const model_fault_names[] = {
    "fault_cpl_timeouts", "fault_ur", "fault_ca", "fault_ep_reads", "fault_ep_tlps",
    "fault_split_reads", "fault_reordered", "fault_starves", "fault_link_downs",
    "fault_link_lost_tlps", "fault_link_lost_reads"};
#define N_MODEL_FAULTS (sizeof model_fault_names / sizeof model_fault_names[0])
_Static_assert(N_MODEL_FAULTS <= sizeof ((struct ctx *)0)->model_faults / sizeof(uint64_t),
               "ctx.model_faults too small");

static void model_checks_add(struct ctx *c)
{
    for (size_t i = 0; i < N_MODEL_FAULTS; i++) {
        char n[64];
        uint64_t v;
        snprintf(n, sizeof n, "model.%s", model_fault_names[i]);
        if (counter(c, n, &v))
            c->model_faults[i] += v;
    }
    for (size_t i = 0; i < N_MODEL_CHECKS; i++) {
        char n[64];
        uint64_t v;
        snprintf(n, sizeof n, "model.%s", model_check_names[i]);
        if (counter(c, n, &v)) {
            c->have_model_checks = true;
            c->model_checks[i] += v;
        }
    }
}

void close_backend(struct ctx *c)
{
    if (!c->b)
        return;
    speed_end(c);
    model_checks_add(c);
    nic_close(c->b);
    c->b = NULL;
}

/* Open the backend with opts and run the bring-up check (nic_dev_check). */
int open_backend(struct ctx *c, const char *opts)
{
    char err[1024] = "";
    c->b = nic_backend_open(c->kind, opts, err, sizeof err);
    if (!c->b)
        return fail(c, "cannot open the %s backend: %s", c->kind, err);
    if (!c->params) {
        const char *p = nic_params_json(c->b);
        c->params = strdup(p ? p : "null");
    }
    speed_begin(c);
    if (nic_dev_check(c->b, &c->info, err, sizeof err) < 0) {
        const char *be = nic_last_error(c->b);
        return fail(c, "bring-up check failed: %s%s%s", err, be ? "; backend error: " : "",
                    be ? be : "");
    }
    c->align = c->info.data_width / 8;
    return backend_check(c, "bring-up check");
}

/* The MPS/MRRS the device itself uses (PCIE_PHY_PHY_MAX_*_SIZE), -1 if the SoC lacks the
 * pcie_phy block this binary knows. */
int dev_mps(struct nic_backend *b)
{
    if (!nic_rb_find(b, NIC_RB_PCIE_PHY))
        return -1;
    return (int)nic_read32(b, NIC_CSR(b, PCIE_PHY, PHY_MAX_PAYLOAD_SIZE));
}

int dev_mrrs(struct nic_backend *b)
{
    if (!nic_rb_find(b, NIC_RB_PCIE_PHY))
        return -1;
    return (int)nic_read32(b, NIC_CSR(b, PCIE_PHY, PHY_MAX_REQUEST_SIZE));
}

void print_params(struct ctx *c, const char *label)
{
    out(c, "%s%s\n", label, nic_params_json(c->b));
}

/* --- option parsing ---------------------------------------------------------------------------- */

/* "coalesce": {ethtool -C name: value} of the settings a run used. */
void json_coalesce(struct bu_json *j, const struct nic_q_coalesce *co)
{
    const struct {
        const char *name;
        uint32_t v;
    } cos[] = {{"rx-usecs", co->rx_usecs}, {"rx-frames", co->rx_frames},
               {"rx-abs-usecs", co->rx_abs_usecs}, {"rx-min-interval", co->rx_min_interval},
               {"tx-usecs", co->tx_usecs}, {"tx-frames", co->tx_frames},
               {"tx-abs-usecs", co->tx_abs_usecs}, {"tx-min-interval", co->tx_min_interval}};
    bu_json_key(j, "coalesce");
    bu_json_obj_begin(j);
    for (size_t k = 0; k < sizeof cos / sizeof cos[0]; k++)
        bu_json_ku64(j, cos[k].name, cos[k].v);
    bu_json_obj_end(j);
}

/* Wait for one MSI; fail with what is known when none comes. The wait is cut in slices so a
 * backend error (e.g. a TLP the model rejected, whose data will never come) ends it early;
 * an MSI ends a slice at once, so slicing does not change the measured time. */
/* Wait for the MSI of interrupt `irq` (a block's MSI number, nic_rb_msi()): its vector must be
 * irq's. */
int wait_msi(struct ctx *c, unsigned irq, const char *what)
{
    const uint64_t deadline = nic_now_ns(c->b) + c->timeout_ns;
    for (;;) {
        const uint64_t now = nic_now_ns(c->b);
        const uint64_t left = deadline > now ? deadline - now : 0;
        unsigned vec = 0;
        const int r = nic_irq_wait_vector(c->b, left < MSI_WAIT_SLICE_NS ? left
                                                                         : MSI_WAIT_SLICE_NS, &vec);
        if (r == 1 && vec != irq)
            return fail(c, "%s: MSI on vector %u, expected vector %u", what, vec, irq);
        if (r == 1)
            return backend_check(c, what);
        const char *e = nic_last_error(c->b);
        if (r < 0)
            return fail(c, "%s: irq_wait failed: %s", what, e ? e : "?");
        if (e)
            return fail(c, "%s: backend error: %s", what, e);
        if (left == 0)
            return fail(c, "%s: no MSI within %" PRIu64 " ns (waiting for vector %u)", what,
                        c->timeout_ns, irq);
    }
}

/* Spin (nic_idle 8 ns) until the 16 bytes at p equal want. */
int wait_tail(struct ctx *c, const volatile uint8_t *p, const uint8_t *want,
              const char *what)
{
    const uint64_t deadline = nic_now_ns(c->b) + c->timeout_ns;
    for (;;) {
        bool same = true;
        for (int k = 0; k < 16; k++)
            if (p[k] != want[k])
                same = false;
        if (same)
            return EXIT_OK;
        const char *e = nic_last_error(c->b);
        if (e)
            return fail(c, "%s: backend error: %s", what, e);
        if (nic_now_ns(c->b) > deadline) {
            char got[40], exp[40];
            for (int k = 0; k < 16; k++) {
                snprintf(got + 2 * k, 3, "%02x", p[k]);
                snprintf(exp + 2 * k, 3, "%02x", want[k]);
            }
            return fail(c, "%s: the last 16 bytes did not arrive within %" PRIu64 " ns after "
                        "the MSI: they hold %s, expected %s", what, c->timeout_ns, got, exp);
        }
        nic_idle(c->b, 8);
    }
}

/* Parse a --sizes list of Ethernet frame sizes (bytes without FCS) for tx and rr: each must be
 * TX_HDR..NIC_Q_FRAME_MAX. Sets *max_size to the largest. 0, or a usage error's exit code. */
int frame_sizes(const char *sizes_s, uint64_t *sizes, size_t *nsizes, uint64_t *max_size)
{
    char err[512];
    if (bu_parse_list(sizes_s, sizes, MAX_SIZES, nsizes, err, sizeof err) < 0)
        return usage_error("--sizes: %s", err);
    *max_size = 0;
    for (size_t i = 0; i < *nsizes; i++) {
        if (sizes[i] < TX_HDR || sizes[i] > NIC_Q_FRAME_MAX)
            return usage_error("--sizes: frame of %" PRIu64 " bytes: must be %u..%u (without "
                               "FCS; the MAC pads to %u)", sizes[i], TX_HDR, NIC_Q_FRAME_MAX,
                               NIC_Q_FRAME_MIN);
        if (sizes[i] > *max_size)
            *max_size = sizes[i];
    }
    return 0;
}

/* --- output files ------------------------------------------------------------------------------ */

/* --json FILE is written as FILE.part, created before the run (json_create()), and renamed to
 * FILE once complete (write_json()); json_part is empty when there is none. */
static char json_part[4096];

/* Create FILE.part for --json FILE: 0, or a one-line error and EXIT_USAGE. */
static int json_create(const char *path)
{
    const int r = cli_part_create("--json", path, json_part, sizeof json_part);
    if (r)
        json_part[0] = 0;
    return r;
}

/* Drop the unfinished --json file. */
static void json_discard(void)
{
    if (json_part[0])
        remove(json_part);
    json_part[0] = 0;
}

/* --- main -------------------------------------------------------------------------------------- */

static int write_json(struct ctx *c, int status)
{
    struct bu_json j;
    bu_json_init(&j);
    bu_json_obj_begin(&j);
    bu_json_kstr(&j, "tool", "nicbench");
    bu_json_kstr(&j, "command", c->command);
    bu_json_kstrs(&j, "argv", (const char *const *)c->argv, (size_t)c->argc);
    bu_json_kstr(&j, "backend", c->kind);
    bu_json_kstr(&j, "opts", c->opts);
    bu_json_key(&j, "params");
    bu_json_raw(&j, c->params);
    bu_json_kstr(&j, "status", status == EXIT_OK ? "ok" : "fail");
    bu_json_kstr(&j, "error", status == EXIT_OK ? NULL : c->run.failmsg);
    if (c->nconfigs) {
        bu_json_key(&j, "configs");
        bu_json_raw(&j, c->configs.buf);
    }
    bu_json_key(&j, "sim_speed");
    if (c->have_cycles) {
        bu_json_obj_begin(&j);
        bu_json_ku64(&j, "cycles", c->cycles);
        bu_json_ku64(&j, "sim_ns", c->sim_ns);
        bu_json_kdouble(&j, "wall_s", (double)c->wall_ns / 1e9);
        bu_json_kdouble(&j, "cycles_per_wall_s",
                        c->wall_ns ? (double)c->cycles * 1e9 / (double)c->wall_ns : NAN);
        bu_json_obj_end(&j);
    } else {
        bu_json_null(&j);
    }
    bu_json_key(&j, "model_checks");
    if (c->have_model_checks) {
        bu_json_obj_begin(&j);
        for (size_t i = 0; i < N_MODEL_CHECKS; i++)
            bu_json_ku64(&j, model_check_names[i], c->model_checks[i]);
        bu_json_obj_end(&j);
    } else {
        bu_json_null(&j);
    }
    bu_json_key(&j, "model_faults");
    if (c->have_model_checks) {
        bu_json_obj_begin(&j);
        for (size_t i = 0; i < N_MODEL_FAULTS; i++)
            bu_json_ku64(&j, model_fault_names[i], c->model_faults[i]);
        bu_json_obj_end(&j);
    } else {
        bu_json_null(&j);
    }
    bu_json_key(&j, "records");
    bu_json_raw(&j, c->rec.buf ? c->rec.buf : "[]");
    bu_json_obj_end(&j);
    const char *why = NULL;
    if (j.oom) {
        why = "out of memory";
    } else {
        FILE *f = fopen(json_part, "w");
        if (!f)
            why = strerror(errno);
        else if (fprintf(f, "%s\n", j.buf) < 0 || ferror(f))
            why = strerror(errno), fclose(f);
        else if (fclose(f) != 0 || rename(json_part, c->json_path) != 0)
            why = strerror(errno);
    }
    bu_json_free(&j);
    if (!why) {
        json_part[0] = 0;
        return EXIT_OK;
    }
    json_discard();
    /* The run's own failure, if any, stays the one main() reports. */
    if (c->run.failmsg[0])
        fprintf(stderr, "nicbench: error: cannot write %s: %s\n", c->json_path, why);
    return fail(c, "cannot write %s: %s", c->json_path, why);
}

int main(int argc, char **argv)
{
    struct ctx ctx = {0};                  /* the global options fill it below */
    struct ctx *c = &ctx;
    c->argc = argc;
    c->argv = argv;
    cli_init("nicbench", "Try 'nicbench --help'.");
    struct global_opts g;
    const int i = global_opts_parse(argc, argv, &g, usage_error);
    if (i < 0)
        return EXIT_USAGE;
    if (g.help) {
        fputs(usage_text, stdout);
        return EXIT_OK;
    }
    c->kind = g.kind;
    c->opts = g.opts;
    c->json_path = g.json_path;
    c->run.quiet = g.quiet;
    c->timeout_ns = g.timeout_ns;
    if (i >= argc)
        return usage_error("no command given (info, stats, csr, dma, loopback, misaligned, tx, "
                           "rr or fuzz)");
    c->command = argv[i];
    for (int k = i + 1; k < argc; k++)
        if (strcmp(argv[k], "-h") == 0 || strcmp(argv[k], "--help") == 0) {
            fputs(usage_text, stdout);
            return EXIT_OK;
        }
    int (*cmd)(struct ctx *, int, char **) = NULL;
    if (strcmp(c->command, "info") == 0)
        cmd = cmd_info;
    else if (strcmp(c->command, "stats") == 0)
        cmd = cmd_stats;
    else if (strcmp(c->command, "csr") == 0)
        cmd = cmd_csr;
    else if (strcmp(c->command, "dma") == 0)
        cmd = cmd_dma;
    else if (strcmp(c->command, "loopback") == 0)
        cmd = cmd_loopback;
    else if (strcmp(c->command, "misaligned") == 0)
        cmd = cmd_misaligned;
    else if (strcmp(c->command, "tx") == 0)
        cmd = cmd_tx;
    else if (strcmp(c->command, "rr") == 0)
        cmd = cmd_rr;
    else if (strcmp(c->command, "fuzz") == 0)
        cmd = cmd_fuzz;
    else
        return usage_error("unknown command '%s' (info, stats, csr, dma, loopback, misaligned, "
                           "tx, rr or fuzz)", c->command);

    /* Everything the run is to write must be writable before it starts. */
    char err[1024] = "";
    if (nic_backend_check_opts(c->kind, c->opts, err, sizeof err) < 0) {
        fprintf(stderr, "nicbench: --opts: %s\n", err);
        return EXIT_USAGE;
    }
    if (c->json_path) {
        const int jr = json_create(c->json_path);
        if (jr)
            return jr;
    }

    bu_json_init(&c->rec);
    bu_json_init(&c->configs);
    bu_json_arr_begin(&c->rec);
    bu_json_arr_begin(&c->configs);
    const uint64_t w0 = wall_ns();
    /* The command parses its own argv, argv[0] its name, from the start: optind = 0 makes
     * getopt_long reinitialise. */
    optind = 0;
    int rc = cmd(c, argc - i, argv + i);
    bu_json_arr_end(&c->rec);
    bu_json_arr_end(&c->configs);
    if (rc == EXIT_USAGE) {
        json_discard();
        close_backend(c);
        bu_json_free(&c->rec);
        bu_json_free(&c->configs);
        free(c->params);
        return rc;
    }
    if (c->b) {
        if (rc)
            quiesce(c);     /* leave no DMA running on a failure */
        close_backend(c);
    }
    if (c->have_cycles && c->wall_ns)
        out(c, "sim speed: %.0f simulated cycles per wall second (%" PRIu64 " cycles, %.3f "
            "simulated ms, %.2f wall s)\n", (double)c->cycles * 1e9 / (double)c->wall_ns,
            c->cycles, (double)c->sim_ns / 1e6, (double)c->wall_ns / 1e9);
    uint64_t nfaults = 0;
    for (size_t i = 0; i < N_MODEL_FAULTS; i++)
        nfaults += c->model_faults[i];
    if (nfaults) {
        const char *seed = c->params ? strstr(c->params, "\"fault_seed\":") : NULL;
        out(c, "faults injected (fault_seed=%llu replays them):",
            seed ? strtoull(seed + 13, NULL, 10) : 0ull);
        for (size_t i = 0; i < N_MODEL_FAULTS; i++)
            if (c->model_faults[i])
                out(c, " %s=%" PRIu64, model_fault_names[i] + 6, c->model_faults[i]);
        out(c, "\n");
    }
    if (c->json_path) {
        const int jr = write_json(c, rc);
        if (!rc)
            rc = jr;
    }
    if (rc == EXIT_OK)
        printf("nicbench %s: ok (%.2f s)\n", c->command, (double)(wall_ns() - w0) / 1e9);
    else
        fprintf(stderr, "nicbench %s: FAILED: %s\n", c->command, c->run.failmsg);
    bu_json_free(&c->rec);
    bu_json_free(&c->configs);
    free(c->params);
    return rc;
}
