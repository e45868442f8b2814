/**
 * Printer columns shared by the built-in kinds and the Table printer: they belong to the types
 * (a kind declares where its Age column goes), so they live with the types, not with HTTP.
 */
import { age, readMeta } from '../base/meta.js';
import type { PrinterColumn } from './registry.js';

export const AGE_COLUMN: PrinterColumn = { name: 'Age', type: 'date', cell: (o) => age(readMeta(o).creationTimestamp) };
