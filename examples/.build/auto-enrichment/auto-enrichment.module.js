var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var __param = (this && this.__param) || function (paramIndex, decorator) {
    return function (target, key) { decorator(target, key, paramIndex); }
};
var _a, _b;
/**
 * Example extension: registers an enrichment task for every new object in chosen collections.
 *
 * Load it with the service's settings (see README.md beside this file):
 *   EXTENSIONS=examples/.build/auto-enrichment/auto-enrichment.module.js
 *   EXT_AUTO_ENRICHMENT_COLLECTIONS=phishing,malware   (collections to watch)
 *   EXT_AUTO_ENRICHMENT_SCHEMA=verdict                 (the insight schema the tasks ask for)
 */
import { Inject, Injectable, Logger, Module } from '@nestjs/common';
import { DomainEvents, EXTENSION_SETTINGS, TasksService, } from 'intel-data-service/extensions';
/** Its own settings, checked when the service starts: a missing one stops the start with a clear message. */
function required(settings, name) {
    const value = settings[name]?.trim();
    if (!value)
        throw new Error(`auto-enrichment: ${name} is required`);
    return value;
}
let AutoEnrichment = class AutoEnrichment {
    events;
    tasks;
    logger = new Logger('AutoEnrichment');
    collections;
    schemaID;
    constructor(settings, events, tasks) {
        this.events = events;
        this.tasks = tasks;
        this.collections = new Set(required(settings, 'EXT_AUTO_ENRICHMENT_COLLECTIONS').split(',').map((name) => name.trim()));
        this.schemaID = required(settings, 'EXT_AUTO_ENRICHMENT_SCHEMA');
    }
    onModuleInit() {
        // Delivered after the object's commit, on the instance that added it: one task per new object.
        this.events.on('intel.object.added', (event) => this.enrich(event));
    }
    /** A failure here is logged by DomainEvents; the add that caused it has already succeeded. */
    async enrich({ collection, object }) {
        if (!this.collections.has(collection))
            return;
        // Insight keys have no IPNetwork: a network cannot be enriched as a task object.
        const objectKeys = object.keys.filter((key) => key.type !== 'IPNetwork');
        if (objectKeys.length === 0)
            return;
        const { taskID } = await this.tasks.register({ params: { schemaID: this.schemaID, objectKeys } });
        this.logger.log(`task ${taskID} enriches ${objectKeys[0].type} ${objectKeys[0].value} of ${collection}`);
    }
};
AutoEnrichment = __decorate([
    Injectable(),
    __param(0, Inject(EXTENSION_SETTINGS)),
    __metadata("design:paramtypes", [Object, typeof (_a = typeof DomainEvents !== "undefined" && DomainEvents) === "function" ? _a : Object, typeof (_b = typeof TasksService !== "undefined" && TasksService) === "function" ? _b : Object])
], AutoEnrichment);
export { AutoEnrichment };
let AutoEnrichmentModule = class AutoEnrichmentModule {
};
AutoEnrichmentModule = __decorate([
    Module({ providers: [AutoEnrichment] })
], AutoEnrichmentModule);
export default AutoEnrichmentModule;
