package dev.vigilo.storage;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Pattern;

/**
 * A TCP forwarder on {@code 127.0.0.1} in front of a real server that can be made to stall, like a black-holed
 * network path (requests hang, no error):
 *
 * <ul>
 *   <li>{@link #stall()}: from now on it forwards nothing more in either direction and answers nothing;
 *   <li>{@link #stallRequestsMatching(Pattern)}: a connection stalls from the first HTTP request whose request line
 *       ({@code METHOD /path HTTP/1.1}) matches; other requests pass;
 *   <li>{@link #silent()}: a proxy in front of nothing, that accepts connections and never answers.
 * </ul>
 */
public final class StallingTcpProxy implements AutoCloseable {
    private final ServerSocket server;
    private final int targetPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean stalled;
    private volatile Pattern stallingRequests;

    /** A forwarder to {@code 127.0.0.1:targetPort}. */
    public StallingTcpProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::acceptLoop, "stalling-proxy");
        t.setDaemon(true);
        t.start();
    }

    /** An endpoint that accepts connections and never answers. */
    public static StallingTcpProxy silent() throws IOException {
        StallingTcpProxy proxy = new StallingTcpProxy(-1);
        proxy.stall();
        return proxy;
    }

    public int port() {
        return server.getLocalPort();
    }

    /** {@code http://127.0.0.1:<port>}. */
    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + port());
    }

    /** Stalls every connection, open or new. */
    public void stall() {
        stalled = true;
    }

    /** Stalls each connection from its first request whose request line matches {@code requestLine}. */
    public void stallRequestsMatching(Pattern requestLine) {
        stallingRequests = requestLine;
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket in = server.accept();
                sockets.add(in);
                if (stalled) {
                    continue; // accepted, never answered
                }
                Socket out = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(out);
                pump(in, out, true);
                pump(out, in, false);
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void pump(Socket from, Socket to, boolean requests) {
        Thread t = new Thread(
                () -> {
                    byte[] buf = new byte[16384];
                    boolean connectionStalled = false;
                    try (InputStream i = from.getInputStream();
                            OutputStream o = to.getOutputStream()) {
                        int n;
                        while ((n = i.read(buf)) >= 0) {
                            if (requests && !connectionStalled && matchesStallingRequest(buf, n)) {
                                connectionStalled = true;
                            }
                            while (stalled || connectionStalled) {
                                Thread.sleep(50); // hold the bytes: the peer waits for ever
                            }
                            o.write(buf, 0, n);
                            o.flush();
                        }
                    } catch (IOException | InterruptedException e) {
                        // Connection closed.
                    }
                },
                "stalling-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Whether the chunk starts an HTTP request whose request line matches the stalling pattern. */
    private boolean matchesStallingRequest(byte[] buf, int n) {
        Pattern pattern = stallingRequests;
        if (pattern == null) {
            return false;
        }
        String head = new String(buf, 0, Math.min(n, 2048), StandardCharsets.ISO_8859_1);
        int end = head.indexOf("\r\n");
        return end > 0 && pattern.matcher(head.substring(0, end)).matches();
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
