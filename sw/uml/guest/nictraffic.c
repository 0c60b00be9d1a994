// SPDX-License-Identifier: BSD-2-Clause
/*
 * nictraffic.c: the UML guest's traffic tool (static, in the guest's initramfs). Sends COUNT
 * Ethernet frames of SIZE bytes (header included, FCS not) on IFACE through an AF_PACKET raw
 * socket, at most WINDOW not yet received back, and receives them back: the NIC's MAC loopback
 * (the SoC's simulated PHY returns every frame it sends). Each frame is addressed to IFACE's own
 * MAC with EtherType 0x88b5 (IEEE local experimental) and carries its sequence number and a
 * pattern derived from it, and a tag of the run; a frame received back is counted good when its
 * bytes are exactly what was sent; one with another run's tag (an earlier run's frame delivered
 * late) is not counted received but stale.
 *
 *   nictraffic IFACE COUNT SIZE [WINDOW] [TIMEOUT_MS]
 *   nictraffic -u IFACE COUNT SIZE csum|nocsum DST_IP [WINDOW] [TIMEOUT_MS]
 *
 * -u: the frames are UDP datagrams (SIZE bytes of frame) sent through the kernel's UDP/IP stack
 * to DST_IP (port 9, discard; the caller gives DST_IP a neighbour entry with IFACE's own MAC, so
 * the loopback returns them), with the UDP checksum computed by the kernel (csum) or not
 * (nocsum: SO_NO_CHECK; the NIC has no checksum offload). A frame received back is good when it
 * is IPv4/UDP to DST_IP carrying the datagram sent, with a checksum field that is non-zero
 * (csum) or zero (nocsum). Each sendto() is timed (the kernel's send path, wall time).
 *
 * Prints one line: `nictraffic: sent N received M good G bad B lost L seconds S frames_per_s F`
 * (wall time of the guest) and, raw, `stale N`; with -u also `send_ns_median X send_ns_mean Y`. Exit status 0
 * only when every frame came back good.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ETHERTYPE_LOCAL 0x88b5
#define MAX_FRAME 1514
#define UDP_HDRS 42                 /* Ethernet 14 + IPv4 20 + UDP 8 */
#define DISCARD_PORT 9

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A raw frame: own MAC both ways, EtherType, sequence number, this run's tag, pattern. */
static void fill(uint8_t *f, const uint8_t *mac, uint32_t seq, uint32_t run, int size)
{
    int i;

    memcpy(f, mac, 6);
    memcpy(f + 6, mac, 6);
    f[12] = ETHERTYPE_LOCAL >> 8;
    f[13] = ETHERTYPE_LOCAL & 0xff;
    memcpy(f + 14, &seq, 4);
    memcpy(f + 18, &run, 4);
    for (i = 22; i < size; i++)
        f[i] = (uint8_t)(seq * 7 + (uint32_t)i);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* A returned UDP frame: to dst:9, its payload as sent for its sequence number, checksum as
 * asked. *seq gets the sequence number. */
static int udp_good(const uint8_t *f, ssize_t n, long size, uint32_t dst, int csum,
                    uint32_t *seq)
{
    uint8_t want[MAX_FRAME];
    uint16_t ck;
    uint32_t d;
    long i;

    if (n != size || f[12] != 0x08 || f[13] != 0x00 || f[23] != 17)
        return -1;
    memcpy(&d, f + 30, 4);
    if (d != dst || f[36] != 0 || f[37] != DISCARD_PORT)
        return -1;
    memcpy(seq, f + UDP_HDRS, 4);
    for (i = UDP_HDRS + 4; i < size; i++)
        want[i] = (uint8_t)(*seq * 7 + (uint32_t)i);
    ck = (uint16_t)(f[40] << 8 | f[41]);
    if (memcmp(f + UDP_HDRS + 4, want + UDP_HDRS + 4, (size_t)(size - UDP_HDRS - 4)))
        return 0;
    return csum ? ck != 0 : ck == 0;
}

/* Binds the AF_PACKET socket s to interface name (every protocol). */
static int bind_if(int s, const char *name)
{
    struct sockaddr_ll sll;

    memset(&sll, 0, sizeof(sll));
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ETH_P_ALL);
    sll.sll_ifindex = (int)if_nametoindex(name);
    if (!sll.sll_ifindex || bind(s, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
        perror("nictraffic: bind");
        return -1;
    }
    return 0;
}

static int udp_main(int argc, char **argv)
{
    uint8_t pl[MAX_FRAME], rx[2048];
    struct sockaddr_in to;
    long count, size, window = 16, timeout_ms = 5000;
    long sent = 0, received = 0, good = 0, bad = 0, i;
    double t0, dt, *send_ns, sum = 0;
    int csum, s, u, one = 1;

    if (argc < 7) {
        fprintf(stderr, "usage: nictraffic -u IFACE COUNT SIZE csum|nocsum DST_IP [WINDOW] "
                "[TIMEOUT_MS]\n");
        return 2;
    }
    count = strtol(argv[3], NULL, 0);
    size = strtol(argv[4], NULL, 0);
    csum = !strcmp(argv[5], "csum");
    if (argc > 7)
        window = strtol(argv[7], NULL, 0);
    if (argc > 8)
        timeout_ms = strtol(argv[8], NULL, 0);
    memset(&to, 0, sizeof(to));
    to.sin_family = AF_INET;
    to.sin_port = htons(DISCARD_PORT);
    if (count < 1 || size < UDP_HDRS + 4 || size > MAX_FRAME || window < 1 ||
        (!csum && strcmp(argv[5], "nocsum")) || inet_pton(AF_INET, argv[6], &to.sin_addr) != 1) {
        fprintf(stderr, "nictraffic -u: COUNT >= 1, SIZE %d..%d, csum|nocsum, an IPv4 DST_IP\n",
                UDP_HDRS + 4, MAX_FRAME);
        return 2;
    }
    send_ns = calloc((size_t)count, sizeof(double));
    s = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    u = socket(AF_INET, SOCK_DGRAM, 0);
    if (!send_ns || s < 0 || u < 0) {
        perror("nictraffic: socket");
        return 1;
    }
    if (!csum && setsockopt(u, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one)) < 0) {
        perror("nictraffic: SO_NO_CHECK");
        return 1;
    }
    if (bind_if(s, argv[2]) < 0)
        return 1;
    t0 = now_s();
    while (received < count) {
        struct pollfd pf = { s, POLLIN, 0 };
        struct sockaddr_ll from;
        socklen_t fl = sizeof(from);
        ssize_t n;
        uint32_t seq;
        int r;

        while (sent < count && sent - received < window) {
            double a;

            seq = (uint32_t)sent;
            memcpy(pl, &seq, 4);
            for (i = 4; i < size - UDP_HDRS; i++)
                pl[i] = (uint8_t)(seq * 7 + (uint32_t)(i + UDP_HDRS));
            a = now_s();
            if (sendto(u, pl, (size_t)(size - UDP_HDRS), 0, (struct sockaddr *)&to,
                       sizeof(to)) != size - UDP_HDRS) {
                if (errno == ENOBUFS || errno == EAGAIN)
                    break;
                perror("nictraffic: sendto");
                return 1;
            }
            send_ns[sent] = (now_s() - a) * 1e9;
            sum += send_ns[sent];
            sent++;
        }
        if (poll(&pf, 1, (int)timeout_ms) <= 0)
            break;
        n = recvfrom(s, rx, sizeof(rx), 0, (struct sockaddr *)&from, &fl);
        if (n < 0 || from.sll_pkttype == PACKET_OUTGOING || n < UDP_HDRS ||
            rx[12] != 0x08 || rx[13] != 0x00 || rx[23] != 17)
            continue;
        received++;
        r = udp_good(rx, n, size, to.sin_addr.s_addr, csum, &seq);
        if (r == 1 && seq < (uint32_t)sent)
            good++;
        else
            bad++;
    }
    dt = now_s() - t0;
    qsort(send_ns, (size_t)sent, sizeof(double), cmp_double);
    printf("nictraffic: sent %ld received %ld good %ld bad %ld lost %ld seconds %.3f "
           "frames_per_s %.1f send_ns_median %.0f send_ns_mean %.0f\n", sent, received, good, bad,
           sent - received, dt, dt > 0 ? (double)received / dt : 0.0,
           sent ? send_ns[sent / 2] : 0.0, sent ? sum / (double)sent : 0.0);
    return good == count && bad == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    uint8_t tx[MAX_FRAME], rx[2048], want[MAX_FRAME], mac[6];
    struct ifreq ifr;
    long count, size, window = 16, timeout_ms = 5000;
    long sent = 0, received = 0, good = 0, bad = 0, stale = 0;
    uint32_t run, tag;
    double t0, dt;
    int s;

    if (argc > 1 && !strcmp(argv[1], "-u"))
        return udp_main(argc, argv);
    if (argc < 4) {
        fprintf(stderr, "usage: nictraffic IFACE COUNT SIZE [WINDOW] [TIMEOUT_MS]\n");
        return 2;
    }
    count = strtol(argv[2], NULL, 0);
    size = strtol(argv[3], NULL, 0);
    if (argc > 4)
        window = strtol(argv[4], NULL, 0);
    if (argc > 5)
        timeout_ms = strtol(argv[5], NULL, 0);
    if (count < 1 || size < 60 || size > MAX_FRAME || window < 1) {
        fprintf(stderr, "nictraffic: COUNT >= 1, SIZE 60..%d, WINDOW >= 1\n", MAX_FRAME);
        return 2;
    }
    s = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (s < 0) {
        perror("nictraffic: socket");
        return 1;
    }
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", argv[1]);
    if (ioctl(s, SIOCGIFHWADDR, &ifr) < 0) {
        perror("nictraffic: SIOCGIFHWADDR");
        return 1;
    }
    memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
    if (bind_if(s, argv[1]) < 0)
        return 1;
    t0 = now_s();
    run = (uint32_t)getpid() * 2654435761u ^ (uint32_t)(t0 * 1e6);
    while (received < count) {
        struct pollfd pf = { s, POLLIN, 0 };
        struct sockaddr_ll from;
        socklen_t fl = sizeof(from);
        ssize_t n;
        uint32_t seq;

        while (sent < count && sent - received < window) {
            fill(tx, mac, (uint32_t)sent, run, (int)size);
            if (send(s, tx, (size_t)size, 0) != size) {
                if (errno == ENOBUFS || errno == EAGAIN)
                    break;
                perror("nictraffic: send");
                return 1;
            }
            sent++;
        }
        if (poll(&pf, 1, (int)timeout_ms) <= 0)
            break;
        n = recvfrom(s, rx, sizeof(rx), 0, (struct sockaddr *)&from, &fl);
        if (n < 0 || from.sll_pkttype == PACKET_OUTGOING || n < 18 ||
            rx[12] != (ETHERTYPE_LOCAL >> 8) || rx[13] != (ETHERTYPE_LOCAL & 0xff))
            continue;
        memcpy(&tag, rx + 18, 4);
        if (n >= 22 && tag != run) {
            /* An earlier run's frame, delivered late (after a queue reset, a ring reopened):
             * not this run's, counted apart. */
            stale++;
            continue;
        }
        received++;
        memcpy(&seq, rx + 14, 4);
        fill(want, mac, seq, run, (int)size);
        if (n == size && seq < (uint32_t)sent && !memcmp(rx, want, (size_t)size))
            good++;
        else
            bad++;
    }
    dt = now_s() - t0;
    printf("nictraffic: sent %ld received %ld good %ld bad %ld lost %ld seconds %.3f "
           "frames_per_s %.1f stale %ld\n", sent, received, good, bad, sent - received, dt,
           dt > 0 ? (double)received / dt : 0.0, stale);
    return good == count && bad == 0 ? 0 : 1;
}
