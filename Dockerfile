# The service image: dependencies built from source (better-sqlite3), TypeScript compiled by `prepare`.
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY src ./src
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0 DATABASE_URL=sqlite:/var/lib/reglookup/reglookup.db
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY wsdl ./wsdl
COPY data/sample.ndjson ./data/sample.ndjson
RUN mkdir -p /var/lib/reglookup && chown node:node /var/lib/reglookup
USER node
EXPOSE 8080
CMD ["node", "--max-semi-space-size=8", "dist/cli.js", "serve"]
