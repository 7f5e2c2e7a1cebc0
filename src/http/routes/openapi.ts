import type { RouteModule } from '../route-context.js';

/** `GET /openapi.json`: the OpenAPI 3 document generated from the route schemas. Public. */
export const openApiRoutes: RouteModule = (app) => {
  app.get(
    '/openapi.json',
    { config: { access: 'public' }, schema: { hide: true } },
    async () => app.swagger(),
  );
};
