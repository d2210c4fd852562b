# The service image. Three stages: compile the TypeScript (with the dev dependencies), install the
# production dependencies alone (better-sqlite3 is built there), and a slim runtime image holding
# only those and the compiled code, run as the unprivileged `node` user.

FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
# `prepare` (scripts/prepare.js) compiles src/ into dist/.
RUN npm ci --no-audit --no-fund

FROM node:20-bookworm AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
# No compiler here: prepare skips, and only the production dependencies are installed.
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0 DATABASE_URL=sqlite:/var/lib/reglookup/reglookup.db
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY wsdl ./wsdl
COPY data/sample.ndjson ./data/sample.ndjson
RUN mkdir -p /var/lib/reglookup && chown node:node /var/lib/reglookup
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--max-semi-space-size=8", "dist/cli.js", "serve"]
