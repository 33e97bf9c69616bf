-- The Prefect server keeps its own database next to the factory store.
CREATE DATABASE prefect OWNER envscaler;
