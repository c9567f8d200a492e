import { defineConfig } from "vite";

// Relative asset URLs: the same build is served by `paige serve` at / and loaded by the
// Tauri window from its own protocol.
export default defineConfig({
  base: "./",
  build: { outDir: "dist", assetsDir: "assets", chunkSizeWarningLimit: 4096, target: "es2022" },
  worker: { format: "es" },
  test: { environment: "node", include: ["tests/**/*.test.ts"] },
} as never);
