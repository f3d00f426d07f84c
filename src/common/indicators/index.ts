export * from './indicators.js';
export * from './object-form.dto.js';
