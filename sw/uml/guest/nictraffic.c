/*
 * nictraffic.c: the UML guest's traffic tool (static, in the guest's initramfs). Sends COUNT
 * Ethernet frames of SIZE bytes (header included, FCS not) on IFACE through an AF_PACKET raw
 * socket, at most WINDOW not yet received back, and receives them back: the NIC's MAC loopback
 * (the SoC's simulated PHY returns every frame it sends). Each frame is addressed to IFACE's own
 * MAC with EtherType 0x88b5 (IEEE local experimental) and carries its sequence number and a
 * pattern derived from it; a frame received back is counted good when its bytes are exactly
 * what was sent.
 *
 *   nictraffic IFACE COUNT SIZE [WINDOW] [TIMEOUT_MS]
 *
 * Prints one line: `nictraffic: sent N received M good G bad B lost L seconds S frames_per_s F`
 * (wall time of the guest). Exit status 0 only when every frame came back good.
 */
#include <arpa/inet.h>
#include <errno.h>
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

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void fill(uint8_t *f, const uint8_t *mac, uint32_t seq, int size)
{
    int i;

    memcpy(f, mac, 6);
    memcpy(f + 6, mac, 6);
    f[12] = ETHERTYPE_LOCAL >> 8;
    f[13] = ETHERTYPE_LOCAL & 0xff;
    memcpy(f + 14, &seq, 4);
    for (i = 18; i < size; i++)
        f[i] = (uint8_t)(seq * 7 + (uint32_t)i);
}

int main(int argc, char **argv)
{
    uint8_t tx[MAX_FRAME], rx[2048], want[MAX_FRAME], mac[6];
    struct sockaddr_ll sll;
    struct ifreq ifr;
    long count, size, window = 16, timeout_ms = 5000;
    long sent = 0, received = 0, good = 0, bad = 0;
    double t0, dt;
    int s;

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
    memset(&sll, 0, sizeof(sll));
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ETH_P_ALL);
    sll.sll_ifindex = (int)if_nametoindex(argv[1]);
    if (!sll.sll_ifindex || bind(s, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
        perror("nictraffic: bind");
        return 1;
    }
    t0 = now_s();
    while (received < count) {
        struct pollfd pf = { s, POLLIN, 0 };
        struct sockaddr_ll from;
        socklen_t fl = sizeof(from);
        ssize_t n;
        uint32_t seq;

        while (sent < count && sent - received < window) {
            fill(tx, mac, (uint32_t)sent, (int)size);
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
        received++;
        memcpy(&seq, rx + 14, 4);
        fill(want, mac, seq, (int)size);
        if (n == size && seq < (uint32_t)sent && !memcmp(rx, want, (size_t)size))
            good++;
        else
            bad++;
    }
    dt = now_s() - t0;
    printf("nictraffic: sent %ld received %ld good %ld bad %ld lost %ld seconds %.3f "
           "frames_per_s %.1f\n", sent, received, good, bad, sent - received, dt,
           dt > 0 ? (double)received / dt : 0.0);
    return good == count && bad == 0 ? 0 : 1;
}
