package dev.vigilo.exec;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP forwarder on {@code 127.0.0.1} in front of a real server that can be taken down and brought up again on the
 * same port, like a service whose host went away: {@link #down()} closes the listening socket and every open
 * connection (new connections are refused), {@link #up()} listens again.
 */
final class SwitchableTcpProxy implements AutoCloseable {
    private final int targetPort;
    private final int port;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private ServerSocket server;

    SwitchableTcpProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = listen(0);
        this.port = server.getLocalPort();
        accept(server);
    }

    /** {@code http://127.0.0.1:<port>}. */
    URI endpoint() {
        return URI.create("http://127.0.0.1:" + port);
    }

    /** Refuses connections from now on and drops the open ones. */
    synchronized void down() throws IOException {
        if (server != null) {
            server.close();
            server = null;
        }
        for (Socket s : sockets) {
            s.close();
        }
        sockets.clear();
    }

    /** Listens on the same port again. */
    synchronized void up() throws IOException {
        if (server == null) {
            server = listen(port);
            accept(server);
        }
    }

    private static ServerSocket listen(int port) throws IOException {
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
        return s;
    }

    private void accept(ServerSocket listening) {
        Thread t = new Thread(
                () -> {
                    while (!listening.isClosed()) {
                        try {
                            Socket in = listening.accept();
                            Socket out = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                            sockets.add(in);
                            sockets.add(out);
                            pump(in, out);
                            pump(out, in);
                        } catch (IOException e) {
                            return; // closed
                        }
                    }
                },
                "switchable-proxy");
        t.setDaemon(true);
        t.start();
    }

    private static void pump(Socket from, Socket to) {
        Thread t = new Thread(
                () -> {
                    byte[] buf = new byte[16384];
                    try (InputStream i = from.getInputStream();
                            OutputStream o = to.getOutputStream()) {
                        int n;
                        while ((n = i.read(buf)) >= 0) {
                            o.write(buf, 0, n);
                            o.flush();
                        }
                    } catch (IOException e) {
                        // Connection closed.
                    } finally {
                        try {
                            to.close();
                            from.close();
                        } catch (IOException e) {
                            // Closing a test connection is best-effort.
                        }
                    }
                },
                "switchable-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        down();
    }
}
