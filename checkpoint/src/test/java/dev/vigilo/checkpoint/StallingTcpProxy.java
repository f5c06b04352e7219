package dev.vigilo.checkpoint;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP forwarder in front of a real server that can be made to stall: after {@link #stall()} it
 * forwards nothing more in either direction and answers nothing, like a black-holed network path
 * (requests hang, no error).
 */
final class StallingTcpProxy implements AutoCloseable {
    private final ServerSocket server;
    private final int targetPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean stalled;

    StallingTcpProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::acceptLoop, "stalling-proxy");
        t.setDaemon(true);
        t.start();
    }

    int port() {
        return server.getLocalPort();
    }

    void stall() {
        stalled = true;
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket in = server.accept();
                sockets.add(in);
                if (stalled) continue; // accepted, never answered
                Socket out = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(out);
                pump(in, out);
                pump(out, in);
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(
                () -> {
                    byte[] buf = new byte[16384];
                    try (InputStream i = from.getInputStream();
                            OutputStream o = to.getOutputStream()) {
                        int n;
                        while ((n = i.read(buf)) >= 0) {
                            while (stalled) Thread.sleep(50); // hold the bytes: the peer waits for ever
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

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : sockets) s.close();
    }
}
