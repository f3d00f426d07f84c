import { Get, Post, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ConsoleController } from './console-controller.js';
import { ConsoleOpen, type ConsoleRequest } from './console-http.js';
import { SessionScreen } from './session.screen.js';
import type { Screen } from './views/layout.js';
import { signInView } from './views/session.view.js';

@ConsoleController('')
export class SessionController {
  constructor(private readonly screen: SessionScreen) {}

  @Get('sign-in')
  @ConsoleOpen()
  signInPage(): Screen {
    return signInView();
  }

  @Post('sign-in')
  @ConsoleOpen()
  signIn(@Req() request: ConsoleRequest, @Res() response: Response): Promise<void> {
    return this.screen.signIn(request, response);
  }

  @Post('sign-out')
  signOut(@Req() request: ConsoleRequest, @Res() response: Response): Promise<void> {
    return this.screen.signOut(request, response);
  }

  @Get()
  home(@Req() request: ConsoleRequest): Promise<Screen> {
    return this.screen.home(request.principal!);
  }
}
